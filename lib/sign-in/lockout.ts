import type { Kysely } from 'kysely'
import type { FailureKey, UserKey } from '../../db/repos/sign-in/login-admission.js'
import { clearUserLoginFailures, recordLoginFailure, recordUserLoginFailure } from '../../db/repos/sign-in/login-guards.js'
import type { DB } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { recordAuditEvent, type AuditOrigin } from '../audit/record.js'
import type { Env } from '../env.js'
import { AppError } from '../errors.js'
import { loginFailed, loginLocked, type LoginFailureReason } from './account-events.js'

// How long an attempt waits for earlier, still unresolved attempts of the same key before it gives up.
const ADMISSION_WAIT_MS = 2000

type LockoutEnv = Pick<Env, 'SVC_LOGIN_MAX_FAILURES' | 'SVC_LOGIN_LOCK_SECONDS'>

/** The failure limit and lock period of the login lockout, which every check of a user's password shares. */
export function lockoutLimits(env: LockoutEnv) {
  return { maxFailures: env.SVC_LOGIN_MAX_FAILURES, lockSeconds: env.SVC_LOGIN_LOCK_SECONDS }
}

/**
 * Runs `attempt` (an admission: counts the attempt, or refuses it) until it admits, or throws AUTH_018. When the key
 * is only busy (the limit is taken up by attempts still being checked) it waits for them, so simultaneous attempts
 * with the right password are not refused; guesses are, as soon as a failure among them starts the lock.
 */
export async function awaitAdmission<T extends { admitted: true }>(
  attempt: () => Promise<T | { admitted: false; lockedUntil: Date | null }>,
): Promise<T> {
  const deadline = Date.now() + ADMISSION_WAIT_MS
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    const admission = await attempt()
    if (admission.admitted) return admission
    if (admission.lockedUntil || Date.now() + pause > deadline) {
      const retryAfter = admission.lockedUntil
        ? Math.max(1, Math.ceil((admission.lockedUntil.getTime() - Date.now()) / 1000))
        : 1
      throw new AppError('AUTH_018', undefined, { headers: { 'retry-after': String(retryAfter) } })
    }
    await new Promise((resolve) => setTimeout(resolve, pause))
  }
}

/** How a failed attempt of a known user is audited: who tried from where, and why it failed. */
export interface FailureAudit {
  origin: AuditOrigin
  reason: LoginFailureReason
}

/**
 * Records a failed attempt on the key it was counted on; the failure that reaches the limit starts the lock. A known
 * user's failure is audited in the transaction that counts it (LOGIN_FAILED, then LOGIN_LOCKED when it starts the
 * lock), so the log and the counter never disagree. An id that names no user has no tenant log to write to.
 */
export async function recordFailure(db: Kysely<DB>, key: FailureKey, env: LockoutEnv, audit: FailureAudit): Promise<void> {
  const { maxFailures, lockSeconds } = lockoutLimits(env)
  if ('userId' in key) {
    await withTenant(db, key.tenantId, async (trx) => {
      const lock = await recordUserLoginFailure(trx, key, maxFailures, lockSeconds)
      await recordAuditEvent(trx, key.tenantId, audit.origin, loginFailed(key.userId, audit.reason))
      if (lock) await recordAuditEvent(trx, key.tenantId, audit.origin, loginLocked(key.userId, lock))
    })
  } else {
    await recordLoginFailure(db, key, maxFailures, lockSeconds)
  }
}

/**
 * Forgives the user's failed attempts: the user has just proven the password. `refused`, when the sign-in is still
 * refused (a tenant or user not ACTIVE), is audited as a LOGIN_FAILED in the same transaction.
 */
export async function forgiveFailures(db: Kysely<DB>, key: UserKey, refused?: FailureAudit): Promise<void> {
  await withTenant(db, key.tenantId, async (trx) => {
    await clearUserLoginFailures(trx, key)
    if (refused) await recordAuditEvent(trx, key.tenantId, refused.origin, loginFailed(key.userId, refused.reason))
  })
}
