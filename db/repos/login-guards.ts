import { sql, type Kysely } from 'kysely'
import type { DB } from '../schema.js'

// login_failures and rate_limit_windows hold no tenant rows (keys are customIds, login ids and addresses), so
// they live outside RLS and are shared by every instance through the root handle.

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
  return { hits: row.hits, resetsAt: rateWindowEnd(row.windowStart) }
}

/** Windows are one minute long, starting on the minute. */
export const rateWindowEnd = (windowStart: Date): Date => new Date(windowStart.getTime() + 60_000)
