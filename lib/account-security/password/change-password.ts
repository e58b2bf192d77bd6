import type { Kysely } from 'kysely'
import { admitUserAttempt, type UserKey } from '../../../db/repos/sign-in/login-admission.js'
import { replacePasswordHash } from '../../../db/repos/sign-in/login-password-change.js'
import { revokeSessions } from '../../../db/repos/sign-in/sessions.js'
import { findCredentialsById } from '../../../db/repos/tenancy/users.js'
import type { DB } from '../../../db/schema.js'
import { type TenantTx, withRequestTransaction } from '../../../db/tenant-transaction.js'
import type { AuditOrigin } from '../../audit/record.js'
import type { Env } from '../../env.js'
import { AppError } from '../../errors.js'
import { currentUserMissing } from '../../sign-in/current-user.js'
import { awaitAdmission, forgiveFailures, lockoutLimits, recordFailure } from '../../sign-in/lockout.js'
import { hashPassword, verifyPassword } from '../../sign-in/password-hash.js'
import { checkPasswordPolicy } from './password-policy.js'

/** A password change whose current password is proven: the hash it was proven against and the new one. */
export interface ProvenPasswordChange {
  previousHash: string
  passwordHash: string
}

export interface PasswordChangeCaller {
  tenantId: number
  userId: number
  accessJti: string | null
}

/**
 * Proves the signed-in caller's current password, before any request transaction opens (bcrypt holds no pooled
 * connection): checking it is a login attempt of the user, counted on the user's login-failure key first (one short
 * transaction, with the access token's checks), so a locked user gets AUTH_018 here as at login, a wrong one counts
 * towards the user's lockout and answers AUTH_013, and a right one forgives earlier failures. A wrong one is audited
 * with the failure's count, as the caller's (`origin`) LOGIN_FAILED (WRONG_CURRENT_PASSWORD), and LOGIN_LOCKED if it
 * locks. Returns the credentials it was proven against.
 */
export async function proveCurrentPassword(
  deps: { db: Kysely<DB>; env: Env },
  caller: PasswordChangeCaller,
  password: string,
  origin: AuditOrigin,
): Promise<{ userLoginId: string; passwordHash: string }> {
  const { db, env } = deps
  const key: UserKey = { tenantId: caller.tenantId, userId: caller.userId }
  const credentials = await awaitAdmission(() =>
    withRequestTransaction(db, caller, async (trx) => {
      const found = await findCredentialsById(trx, caller.userId)
      if (!found) throw currentUserMissing()
      const admission = await admitUserAttempt(trx, key, lockoutLimits(env))
      return admission.admitted ? { admitted: true as const, found } : admission
    }),
  ).then((admitted) => admitted.found)

  if (!(await verifyPassword(password, credentials.passwordHash))) {
    await recordFailure(db, key, env, { origin, reason: 'WRONG_CURRENT_PASSWORD' })
    throw new AppError('AUTH_013')
  }
  await forgiveFailures(db, key)
  return credentials
}

/**
 * POST /v1/me/password, its slow part, before the request transaction opens: the current password proven
 * (proveCurrentPassword), then the new password must meet the policy (AUTH_012) and is hashed, with no pooled
 * connection held, so simultaneous changes (wrong ones included) cannot take the pool from other users' requests.
 */
export async function provePasswordChange(
  deps: { db: Kysely<DB>; env: Env },
  caller: PasswordChangeCaller,
  passwords: { currentPassword: string; newPassword: string },
  origin: AuditOrigin,
): Promise<ProvenPasswordChange> {
  const credentials = await proveCurrentPassword(deps, caller, passwords.currentPassword, origin)
  checkPasswordPolicy(passwords.newPassword, credentials.userLoginId)
  const passwordHash = await hashPassword(passwords.newPassword, deps.env.SVC_BCRYPT_COST)
  return { previousHash: credentials.passwordHash, passwordHash }
}

/**
 * The change itself, in the request transaction: the new hash, unless another change replaced the proven one
 * meanwhile (AUTH_013: the password proven is no longer the current one), and every other session of the user
 * ends (PASSWORD_CHANGED, their access tokens blacklisted at once). The caller's own session stays. Returns how
 * many sessions ended.
 */
export async function storePasswordChange(
  trx: TenantTx,
  caller: { userId: number; sid: string },
  proven: ProvenPasswordChange,
): Promise<number> {
  if (!(await replacePasswordHash(trx, caller.userId, proven.previousHash, proven.passwordHash))) {
    throw new AppError('AUTH_013')
  }
  const ended = await revokeSessions(trx, { userId: caller.userId, exceptSid: caller.sid }, 'PASSWORD_CHANGED')
  return ended.length
}
