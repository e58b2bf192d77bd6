import { sql, type Kysely } from 'kysely'
import type { DB } from '../schema.js'

// login_failures and rate_limit_windows hold no tenant rows (keys are customIds, login ids and addresses), so
// they live outside RLS and are shared by every instance through the root handle.

export type LoginAdmission = { admitted: true } | { admitted: false; lockedUntil: Date | null }

/**
 * Admits one login attempt before its password is checked, counting it as a failure until it proves otherwise
 * (clearLoginFailures on success). Counting first keeps simultaneous guesses from slipping past the limit: while
 * `maxFailures` attempts are failed or still unresolved, or the key is locked, no attempt is admitted. Refused with
 * `lockedUntil` null means busy: earlier attempts are still being checked and may yet succeed.
 */
export async function admitLoginAttempt(
  db: Kysely<DB>,
  scope: string,
  loginId: string,
  maxFailures: number,
  lockSeconds: number,
): Promise<LoginAdmission> {
  // The count starts afresh once a lock has ended, or once it has stalled for a lock period (attempts that never
  // finished, e.g. an instance that died mid-check). The row lock taken by the upsert serialises attempts.
  const { rows } = await sql<{ admitted: boolean; lockedUntil: Date | null }>`
    with attempt as (
      insert into login_failures as f (scope, login_id, failures, locked_until, updated_at)
      values (${scope}, ${loginId}, 1, null, now())
      on conflict (scope, login_id) do update set
        failures = case when f.locked_until is null and f.failures < ${maxFailures} then f.failures + 1 else 1 end,
        locked_until = null,
        updated_at = now()
      where (f.locked_until is null and f.failures < ${maxFailures})
         or f.locked_until <= now()
         or (f.locked_until is null and f.updated_at < now() - make_interval(secs => ${lockSeconds}))
      returning 1
    )
    select exists (select 1 from attempt) as admitted,
           (select locked_until from login_failures where scope = ${scope} and login_id = ${loginId}) as locked_until`.execute(db)
  const row = rows[0]!
  if (row.admitted) return { admitted: true }
  // The subquery reads the statement's snapshot, which may predate a lock set meanwhile: then it is only busy.
  return { admitted: false, lockedUntil: row.lockedUntil && row.lockedUntil > new Date() ? row.lockedUntil : null }
}

/** A failed attempt stays counted; once `maxFailures` attempts are counted, a failure starts the lock. */
export async function recordLoginFailure(
  db: Kysely<DB>,
  scope: string,
  loginId: string,
  maxFailures: number,
  lockSeconds: number,
): Promise<void> {
  await sql`
    update login_failures set locked_until = now() + make_interval(secs => ${lockSeconds}), updated_at = now()
    where scope = ${scope} and login_id = ${loginId} and failures >= ${maxFailures} and locked_until is null`.execute(db)
}

export async function clearLoginFailures(db: Kysely<DB>, scope: string, loginId: string): Promise<void> {
  await db.deleteFrom('loginFailures').where('scope', '=', scope).where('loginId', '=', loginId).execute()
}

/** Fixed one-minute window per key; returns the hits so far in this window and when it ends. */
export async function hitRateWindow(db: Kysely<DB>, key: string): Promise<{ hits: number; resetsAt: Date }> {
  const { rows } = await sql<{ hits: number; windowStart: Date }>`
    insert into rate_limit_windows as w (key, window_start, hits)
    values (${key}, date_trunc('minute', now()), 1)
    on conflict (key, window_start) do update set hits = w.hits + 1
    returning hits, window_start`.execute(db)
  const row = rows[0]!
  return { hits: row.hits, resetsAt: new Date(row.windowStart.getTime() + 60_000) }
}
