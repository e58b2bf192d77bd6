import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'
import type { PresentedKey, UserKey } from './login-admission.js'

// login_failures (ids that name no user) and rate_limit_windows hold no tenant rows (keys are customIds, login ids
// and addresses), so they live outside RLS and are shared by every instance through the root handle. A known user's
// counter (user_login_failures) is a tenant row, written in a transaction bound to the user's tenant.

/** A failed attempt stays counted; once `maxFailures` attempts are counted, a failure starts the lock. */
export async function recordLoginFailure(
  db: Kysely<DB>,
  key: PresentedKey,
  maxFailures: number,
  lockSeconds: number,
): Promise<void> {
  await sql`
    update login_failures set locked_until = now() + make_interval(secs => ${lockSeconds}), updated_at = now()
    where scope = ${key.scope} and login_id = ${key.loginId} and failures >= ${maxFailures} and locked_until is null`.execute(db)
}

/** A lock a failure started: until when, after how many failures. */
export interface StartedLock {
  lockedUntil: Date
  failures: number
}

/** recordLoginFailure for a known user's own counter; the lock when this failure started it, else undefined. */
export async function recordUserLoginFailure(
  trx: TenantTx,
  key: UserKey,
  maxFailures: number,
  lockSeconds: number,
): Promise<StartedLock | undefined> {
  const { rows } = await sql<StartedLock>`
    update user_login_failures set locked_until = now() + make_interval(secs => ${lockSeconds}), updated_at = now()
    where tenant_id = ${key.tenantId} and user_id = ${key.userId} and failures >= ${maxFailures}
      and locked_until is null
    returning locked_until, failures`.execute(trx)
  return rows[0]
}

/** Forgives a user's failed attempts once the user has proven the password. */
export async function clearUserLoginFailures(trx: TenantTx, key: UserKey): Promise<void> {
  await trx.deleteFrom('userLoginFailures').where('tenantId', '=', key.tenantId).where('userId', '=', key.userId).execute()
}

/**
 * Takes back the count of one admitted attempt that proved the password without signing in yet (a second step
 * follows): the password was no failure, but the failures before it stay, so a known password never wipes the
 * count of guessed second-factor codes.
 */
export async function settleUserAttempt(trx: TenantTx, key: UserKey): Promise<void> {
  await sql`
    update user_login_failures set failures = greatest(failures - 1, 0), updated_at = now()
    where tenant_id = ${key.tenantId} and user_id = ${key.userId} and locked_until is null`.execute(trx)
}

/** Fixed one-minute window per key; returns the hits so far in this window and when it ends. */
export async function hitRateWindow(db: Kysely<DB>, key: string): Promise<{ hits: number; resetsAt: Date }> {
  const { rows } = await sql<{ hits: number; windowStart: Date }>`
    insert into rate_limit_windows as w (key, window_start, hits)
    values (${key}, date_trunc('minute', now()), 1)
    on conflict (key, window_start) do update set hits = w.hits + 1
    returning hits, window_start`.execute(db)
  const row = rows[0]!
  return { hits: row.hits, resetsAt: rateWindowEnd(row.windowStart) }
}

/** Windows are one minute long, starting on the minute. */
export const rateWindowEnd = (windowStart: Date): Date => new Date(windowStart.getTime() + 60_000)
