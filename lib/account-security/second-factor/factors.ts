import { countRecoveryCodes, replaceRecoveryCodes, takeRecoveryCode } from '../../../db/repos/account-security/recovery-codes.js'
import {
  deleteEmptySecondFactors,
  findSecondFactors,
  takeTotpStep,
  upsertSecondFactors,
  type FactorOwner,
  type SecondFactorsRow,
} from '../../../db/repos/account-security/second-factors.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import { hashRecoveryCode, newRecoveryCodes } from './recovery-codes.js'
import { newRecoveryKey, openRecoveryKey } from './recovery-key.js'
import { openSecret } from './sealed-secret.js'
import type { MfaSettings } from './settings.js'
import { matchingStep } from './totp.js'

/** A way to pass the second step: the two factors, and a recovery code in place of either. */
export type MfaMethod = 'TOTP' | 'SMS' | 'RECOVERY_CODE'

/** GET /v1/me/mfa: which factors are enabled (a pending TOTP enrolment is not), and how many recovery codes are left. */
export interface FactorStatus {
  totp: boolean
  sms: boolean
  recoveryCodesLeft: number
}

export const hasFactor = (row: SecondFactorsRow | undefined): boolean =>
  row !== undefined && (row.totpEnabledAt !== null || row.smsEnabledAt !== null)

export async function factorStatus(trx: TenantTx, owner: FactorOwner): Promise<FactorStatus> {
  const row = await findSecondFactors(trx, owner)
  const recoveryCodesLeft = hasFactor(row) ? await countRecoveryCodes(trx, owner) : 0
  return { totp: row?.totpEnabledAt != null, sms: row?.smsEnabledAt != null, recoveryCodesLeft }
}

/**
 * The methods the second step of this user's login offers: TOTP when enabled, SMS when enabled and the phone is
 * verified (the code goes nowhere else), a recovery code while any is left.
 */
export async function loginMethods(trx: TenantTx, owner: FactorOwner, phoneVerified: boolean): Promise<MfaMethod[]> {
  const row = await findSecondFactors(trx, owner)
  const methods: MfaMethod[] = []
  if (row?.totpEnabledAt != null) methods.push('TOTP')
  if (row?.smsEnabledAt != null && phoneVerified) methods.push('SMS')
  if (hasFactor(row) && (await countRecoveryCodes(trx, owner)) > 0) methods.push('RECOVERY_CODE')
  return methods
}

/**
 * A new set of recovery codes replaces the old one, hashed under a new key of its own (lib/account-security/second-factor/recovery-key.ts) that
 * the user's row keeps sealed; the codes in clear go to the caller, once, and nowhere else.
 */
export async function issueRecoveryCodes(trx: TenantTx, settings: MfaSettings, owner: FactorOwner): Promise<string[]> {
  const codes = newRecoveryCodes()
  const { key, sealed } = newRecoveryKey(settings.keys, owner)
  await upsertSecondFactors(trx, owner, { recoveryKeySealed: sealed })
  await replaceRecoveryCodes(trx, owner, codes.map((code) => hashRecoveryCode(key, owner, code)))
  return codes
}

/**
 * Whether `code` is the user's TOTP code now (one step of drift either way), taking its step: a step signs in once,
 * so a code replayed, overheard or raced within its window proves nothing. Locks the user's factor row.
 */
export async function verifyTotp(trx: TenantTx, settings: MfaSettings, owner: FactorOwner, code: string): Promise<boolean> {
  const row = await findSecondFactors(trx, owner, true)
  if (!row?.totpSecret) return false
  const secret = openSecret(settings.keys, owner, row.totpSecret)
  const step = secret === null ? null : matchingStep(secret, code)
  return step !== null && (await takeTotpStep(trx, owner, step))
}

/** Whether `code` is one of the user's live recovery codes, using it up. Only while the user has a factor. */
export async function verifyRecoveryCode(trx: TenantTx, settings: MfaSettings, owner: FactorOwner, code: string): Promise<boolean> {
  const row = await findSecondFactors(trx, owner)
  const key = row ? openRecoveryKey(settings.keys, owner, row.recoveryKeySealed) : null
  return key !== null && takeRecoveryCode(trx, owner, hashRecoveryCode(key, owner, code))
}

/** After a factor went: the recovery codes go too once no factor is left, and the row once it holds nothing. */
export async function tidyAfterDisable(trx: TenantTx, owner: FactorOwner): Promise<boolean> {
  const row = await findSecondFactors(trx, owner)
  const voided = !hasFactor(row)
  if (voided) {
    await replaceRecoveryCodes(trx, owner, [])
    await upsertSecondFactors(trx, owner, { recoveryKeySealed: null })
  }
  await deleteEmptySecondFactors(trx, owner)
  return voided
}
