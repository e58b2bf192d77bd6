import { countWrongAttempt, deleteCode, lockCode } from '../../../db/repos/account-security/one-time-codes.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import { codeMatches, type CodeBinding } from './codes.js'
import type { OneTimeCodeSettings } from './settings.js'

/**
 * How a presented code fared:
 * - `valid`: it is the slot's live code; its row stays locked until the transaction ends, and the caller either uses
 *   it up (`useUpCode`) or, when something else the request needed was missing, counts the try (`countFailedTry`);
 * - `wrong`: another code; the try is counted, and the code is dead once the tries reach SVC_OTP_MAX_ATTEMPTS;
 * - `none`: there is no live code: none was sent, it was used up, it expired, it is dead of wrong tries, or it went to
 *   a number that is no longer the user's (an expired one, or one of another number, is deleted here).
 * Callers answer `wrong` and `none` alike: which one it was is nobody's business.
 */
export type CodeCheck = 'valid' | 'wrong' | 'none'

/**
 * Checks `code` against the slot's live code, in `trx`, the caller's transaction: commit it even when the answer is a
 * refusal, or the wrong try is not counted. The hash binds tenant, user, purpose and number, so a code verifies for
 * nothing else; `binding.phone` is the user's number now.
 */
export async function checkCode(
  trx: TenantTx,
  settings: OneTimeCodeSettings,
  binding: CodeBinding,
  code: string,
): Promise<CodeCheck> {
  const stored = await lockCode(trx, binding)
  if (!stored || stored.attempts >= settings.maxAttempts) return 'none'
  if (stored.expired || stored.phone !== binding.phone) {
    await deleteCode(trx, binding)
    return 'none'
  }
  // Each key of the ring in turn: no kid is stored with a code, and one keyed before a rotation still lives a while.
  const keys = [settings.key, ...(settings.olderKeys ?? [])]
  if (!keys.some((key) => codeMatches(key, binding, code, stored.codeHash))) {
    await countWrongAttempt(trx, binding)
    return 'wrong'
  }
  return 'valid'
}

/** A valid code, used: deleted, so it never verifies again. */
export async function useUpCode(trx: TenantTx, binding: CodeBinding): Promise<void> {
  await deleteCode(trx, binding)
}

/** A valid code presented without the rest of what the request needed: counted as a wrong try all the same. */
export async function countFailedTry(trx: TenantTx, binding: CodeBinding): Promise<void> {
  await countWrongAttempt(trx, binding)
}
