import { sql, type Kysely } from 'kysely'
import type { DB } from '../schema.js'

// login_failures and rate_limit_windows hold no tenant rows (keys are customIds, login ids and addresses), so
// they live outside RLS and are shared by every instance through the root handle.

export async function findLock(db: Kysely<DB>, scope: string, loginId: string): Promise<Date | null> {
  const row = await db
    .selectFrom('loginFailures')
    .select('lockedUntil')
    .where('scope', '=', scope)
    .where('loginId', '=', loginId)
    .executeTakeFirst()
  return row?.lockedUntil && row.lockedUntil > new Date() ? row.lockedUntil : null
}

/** Counts one failure atomically; the failure that reaches `maxFailures` starts a lock of `lockSeconds`. */
export async function recordLoginFailure(
  db: Kysely<DB>,
  scope: string,
  loginId: string,
  maxFailures: number,
  lockSeconds: number,
): Promise<void> {
  // A lock that has ended starts the count again from one.
  await sql`
    insert into login_failures as f (scope, login_id, failures, locked_until, updated_at)
    values (${scope}, ${loginId}, 1,
            case when 1 >= ${maxFailures} then now() + make_interval(secs => ${lockSeconds}) end, now())
    on conflict (scope, login_id) do update set
      failures = case when f.locked_until <= now() then 1 else f.failures + 1 end,
      locked_until = case
        when (case when f.locked_until <= now() then 1 else f.failures + 1 end) >= ${maxFailures}
        then now() + make_interval(secs => ${lockSeconds})
        else null end,
      updated_at = now()`.execute(db)
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
