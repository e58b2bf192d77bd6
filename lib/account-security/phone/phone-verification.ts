import type { Kysely } from 'kysely'
import { findTenantById } from '../../../db/repos/tenancy/tenants.js'
import { lockUser, markPhoneVerified } from '../../../db/repos/tenancy/users.js'
import type { DB } from '../../../db/schema.js'
import { withRequestTransaction, type RequestScope, type TenantTx } from '../../../db/tenant-transaction.js'
import { recordAuditEvent, type AuditEvent, type AuditOrigin } from '../../audit/record.js'
import { AppError } from '../../errors.js'
import { checkCode, countFailedTry, useUpCode } from '../codes/check-code.js'
import type { CodeBinding } from '../codes/codes.js'
import { issueCode, type CodeIssuing, type IssuedCode } from '../codes/issue-code.js'
import type { OneTimeCodeSettings } from '../codes/settings.js'
import { maskPhone } from '../../sms/phone.js'
import type { Env } from '../../env.js'
import { proveCurrentPassword } from '../password/change-password.js'
import { currentUserMissing, findCurrentUser } from '../../sign-in/current-user.js'

export interface PhoneOwner {
  tenantId: number
  userId: number
}

/** PHONE_VERIFIED: the number masked, never whole. */
export function phoneVerified(userId: number, phone: string): AuditEvent {
  return { type: 'PHONE_VERIFIED', targetId: userId, details: { phone: maskPhone(phone) } }
}

/**
 * POST /v1/me/phone/verification, in the request transaction: a code to the phone on the caller's profile
 * (PHONE_REQUIRED without one), with the limits of lib/account-security/codes/issue-code.ts. The caller kicks the dispatcher after
 * the commit.
 */
export async function requestPhoneVerification(trx: TenantTx, issuing: CodeIssuing, owner: PhoneOwner): Promise<IssuedCode> {
  const user = await findCurrentUser(trx, owner.userId)
  if (user.phone === null) throw new AppError('PHONE_REQUIRED')
  const tenant = await findTenantById(trx, owner.tenantId)
  if (!tenant) throw new AppError('INTERNAL_ERROR', 'user without a tenant')
  const { tenantId, userId } = owner
  return issueCode(trx, issuing, { tenantId, userId, purpose: 'PHONE_VERIFICATION', phone: user.phone, tenantName: tenant.name })
}

/** What proves a new number: the code it received, and the account's password. */
export interface PhoneProof {
  code: string
  password: string
}

/**
 * POST /v1/me/phone/verification/confirm, before the request transaction opens. The password comes first, as a login
 * attempt of the user (proveCurrentPassword: AUTH_018 while locked, a wrong one counted towards the lockout): a stolen
 * session alone can change the phone to the thief's number and receive its code, but without the password it cannot
 * make that number the verified one that recovery and the SMS second factor trust.
 *
 * Then, in a transaction of its own that checks the access token as the request's would and commits even when it
 * refuses, so a wrong try counts (a rolled-back try would give an attacker unlimited guesses): the user's row is locked
 * first, as a change of phone locks it before its trigger deletes the codes, so the two never wait for each other in
 * opposite order. A wrong password leaves the code alive but counts a try of it (AUTH_013). A valid code for the
 * current number is used up, the phone marked verified, and PHONE_VERIFIED recorded; anything else answers OTP_INVALID.
 */
export async function confirmPhoneVerification(
  deps: { db: Kysely<DB>; env: Env },
  codes: OneTimeCodeSettings,
  scope: RequestScope & PhoneOwner,
  proof: PhoneProof,
  origin: AuditOrigin,
): Promise<void> {
  const passwordProven = await proveCurrentPassword(deps, scope, proof.password, origin).then(
    () => true,
    (error: unknown) => {
      if (error instanceof AppError && error.code === 'AUTH_013') return false
      throw error
    },
  )
  const outcome = await withRequestTransaction(deps.db, scope, async (trx): Promise<'verified' | 'AUTH_013' | 'OTP_INVALID'> => {
    const user = await lockUser(trx, scope.userId)
    if (!user) throw currentUserMissing()
    if (user.phone === null) return passwordProven ? 'OTP_INVALID' : 'AUTH_013'
    const binding: CodeBinding = { tenantId: scope.tenantId, userId: scope.userId, purpose: 'PHONE_VERIFICATION', phone: user.phone }
    if (!passwordProven) {
      await countFailedTry(trx, binding)
      return 'AUTH_013'
    }
    if ((await checkCode(trx, codes, binding, proof.code)) !== 'valid') return 'OTP_INVALID'
    await useUpCode(trx, binding)
    await markPhoneVerified(trx, scope.userId, user.phone)
    await recordAuditEvent(trx, scope.tenantId, origin, phoneVerified(scope.userId, user.phone))
    return 'verified'
  })
  if (outcome !== 'verified') throw new AppError(outcome)
}
