import type { Kysely, Transaction } from 'kysely'
import { clearUserLoginFailures } from '../../../db/repos/sign-in/login-guards.js'
import { revokeSessions } from '../../../db/repos/sign-in/sessions.js'
import { findOwnerEntry, findTenantById, findTenantByCustomId, type Tenant } from '../../../db/repos/tenancy/tenants.js'
import type { FactorOwner } from '../../../db/repos/account-security/second-factors.js'
import { findUserById, findUserByLoginId, lockUser, updatePasswordHash, type UserRecord } from '../../../db/repos/tenancy/users.js'
import type { DB } from '../../../db/schema.js'
import { bindTenant, withServiceTransaction, type TenantTx } from '../../../db/tenant-transaction.js'
import { recordAuditEvent, type AuditOrigin } from '../../audit/record.js'
import { catalogErrorFor } from '../../catalog-errors.js'
import type { Env } from '../../env.js'
import { AppError, type ErrorCode } from '../../errors.js'
import { checkCode, countFailedTry, useUpCode } from '../codes/check-code.js'
import type { CodeBinding } from '../codes/codes.js'
import { issueCode, type CodeIssuing } from '../codes/issue-code.js'
import { passwordReset } from '../../sign-in/account-events.js'
import { hashPassword } from '../../sign-in/password-hash.js'
import { checkPasswordPolicy } from '../password/password-policy.js'
import type { SecondFactorCheck, SecondFactorProof } from './reset-factors.js'

/**
 * Password recovery (POST /v1/password/forgot and /reset): a code by SMS to the user's verified phone, then a new
 * password with that code. Neither answer tells whether the account exists, has a verified phone, is active or was
 * over a limit: forgot always answers the same (and before this work runs: lib/account-security/recovery/recovery-requests.ts), reset
 * answers one OTP_INVALID for all of them, after the same lookups whatever the account, and hashes every new
 * password before them.
 */
export interface RecoveryDeps {
  db: Kysely<DB>
  env: Pick<Env, 'SVC_BCRYPT_COST'>
  issuing: CodeIssuing
  secondFactor: SecondFactorCheck
}

/** Which account, named as login names it: portal entry with `customId`, root entry (owners) without. */
export interface RecoveryEntry {
  userLoginId: string
  customId?: string | undefined
}

export interface PasswordResetInput extends RecoveryEntry {
  code: string
  newPassword: string
  secondFactor?: SecondFactorProof | undefined
}

interface RecoveryAccount {
  tenant: Tenant
  user: UserRecord
  /** The lookup's transaction, now bound to the account's tenant. */
  trx: TenantTx
}

/**
 * The account `entry` names, resolved as login resolves it (lib/sign-in/login.ts): the portal entry finds the tenant by
 * customId and the user by the exact login id in it; the root entry finds an owner through the owner directory, by
 * the exact id too (a look-alike is another id). `lock` locks the user's row, as every change of the user's
 * credentials or phone does first.
 */
async function findRecoveryAccount(root: Transaction<DB>, entry: RecoveryEntry, lock: boolean): Promise<RecoveryAccount | null> {
  let tenant: Tenant | undefined
  let userId: number | null = null
  if (entry.customId !== undefined) {
    tenant = await findTenantByCustomId(root, entry.customId)
  } else {
    const owner = await findOwnerEntry(root, entry.userLoginId)
    if (owner?.userLoginId !== entry.userLoginId) return null
    tenant = await findTenantById(root, owner.tenantId)
    userId = owner.userId
  }
  if (!tenant) return null
  const trx = await bindTenant(root, tenant.id)
  let user: UserRecord | undefined
  if (userId !== null) {
    user = lock ? await lockUser(trx, userId) : await findUserById(trx, userId)
  } else {
    user = await findUserByLoginId(trx, entry.userLoginId)
    if (user && lock) user = await lockUser(trx, user.id)
  }
  return user ? { tenant, user, trx } : null
}

/** An account a code may go to, or be taken from: ACTIVE in an ACTIVE tenant, with a verified phone. */
function recoveryPhone({ tenant, user }: RecoveryAccount): string | null {
  if (tenant.status !== 'ACTIVE' || user.status !== 'ACTIVE' || user.phoneVerifiedAt === null) return null
  return user.phone
}

// Refusals that end a request quietly: nobody may be told of them, since each would tell an account that exists (over
// a limit, in an academy without sender or quota left, with a stored number no longer valid) from one that does not;
// so they are no failure to log either.
const UNSPOKEN: readonly ErrorCode[] = [
  'OTP_RATE_LIMITED',
  'SMS_QUOTA_EXCEEDED',
  'SENDER_SETTING_NOT_APPROVED',
  'INVALID_PHONE_NUMBER',
  // The number replaced a verified one moments ago (lib/account-security/phone/phone-change.ts).
  'PHONE_NOT_VERIFIED',
]

/**
 * POST /v1/password/forgot's work, after its answer: a PASSWORD_RESET code to the account's verified phone, if there
 * is one to send to and no limit stands in the way. Returns whether a code was queued (the caller kicks the
 * dispatcher); refusals are not errors here, since nobody is told of them.
 */
export async function requestPasswordReset(deps: RecoveryDeps, entry: RecoveryEntry): Promise<boolean> {
  try {
    return await withServiceTransaction(deps.db, async (root) => {
      const account = await findRecoveryAccount(root, entry, false)
      const phone = account && recoveryPhone(account)
      if (!account || !phone) return false
      const { tenant, user, trx } = account
      await issueCode(trx, deps.issuing, { tenantId: tenant.id, userId: user.id, purpose: 'PASSWORD_RESET', phone, tenantName: tenant.name })
      return true
    })
  } catch (error) {
    const refusal = catalogErrorFor(error)
    if (refusal && UNSPOKEN.includes(refusal.code)) return false
    throw error
  }
}

type ResetOutcome = 'reset' | 'invalid' | 'second-factor-missing'

/**
 * POST /v1/password/reset. The new password meets the policy (AUTH_012) and is hashed before any connection is held,
 * for every request alike. Then, in one transaction: the code of the account's verified phone must be valid, and the
 * second factor proven when the user has one (MFA_REQUIRED otherwise, the code staying live with the try counted);
 * the password is replaced, every session ends (PASSWORD_RESET), the lockout count is cleared, the code is used up
 * and PASSWORD_RESET recorded (no actor: nobody is signed in). An unknown account, one not allowed to recover, and a
 * wrong, expired, used or absent code all answer OTP_INVALID, after the transaction has committed the counted try.
 */
export async function resetPasswordWithCode(deps: RecoveryDeps, input: PasswordResetInput, origin: AuditOrigin): Promise<void> {
  checkPasswordPolicy(input.newPassword, input.userLoginId)
  const passwordHash = await hashPassword(input.newPassword, deps.env.SVC_BCRYPT_COST)
  const outcome = await withServiceTransaction(deps.db, async (root): Promise<ResetOutcome> => {
    const account = await findRecoveryAccount(root, input, true)
    const phone = account && recoveryPhone(account)
    if (!account || !phone) return 'invalid'
    const { tenant, user, trx } = account
    const binding: CodeBinding = { tenantId: tenant.id, userId: user.id, purpose: 'PASSWORD_RESET', phone }
    if ((await checkCode(trx, deps.issuing.codes, binding, input.code)) !== 'valid') return 'invalid'
    if (!(await secondFactorProven(deps.secondFactor, trx, { tenantId: tenant.id, userId: user.id }, input.secondFactor))) {
      await countFailedTry(trx, binding)
      return 'second-factor-missing'
    }
    await useUpCode(trx, binding)
    await updatePasswordHash(trx, user.id, passwordHash)
    const ended = await revokeSessions(trx, { userId: user.id }, 'PASSWORD_RESET')
    await clearUserLoginFailures(trx, { tenantId: tenant.id, userId: user.id })
    await recordAuditEvent(trx, tenant.id, origin, passwordReset(user.id, ended.length))
    return 'reset'
  })
  if (outcome === 'invalid') throw new AppError('OTP_INVALID')
  if (outcome === 'second-factor-missing') throw new AppError('MFA_REQUIRED')
}

/** True when the user needs no second factor, or `proof` is one of the required methods and proves the user. */
async function secondFactorProven(
  check: SecondFactorCheck,
  trx: TenantTx,
  owner: FactorOwner,
  proof: SecondFactorProof | undefined,
): Promise<boolean> {
  const required = await check.requiredFor(trx, owner)
  if (required.length === 0) return true
  return proof !== undefined && required.includes(proof.method) && (await check.verify(trx, owner, proof))
}
