import { sql, type Kysely, type Selectable } from 'kysely'
import type { DB, RevocationReason, Role, SessionsTable } from '../schema.js'
import { rateWindowEnd } from './login-guards.js'

export interface SessionRotation {
  /** What the verified refresh token claims; the database decides whether it still holds. */
  presented: { tenantId: number; tenantSlug: string; sid: string; userId: number; refreshJti: string }
  /** The session's next tokens, stored only when it rotates. */
  next: { accessJti: string; accessExpiresAt: Date; refreshJti: string; refreshExpiresAt: Date }
  /** The caller's clock, which set every expiry: last_refreshed_at, and what a stored revocation reason must outlive. */
  now: Date
  /** How long the refresh token the last rotation replaced is answered with the current pair; 0 = never. */
  reuseGraceSeconds: number
}

/** The session's pair after the call: the new one (ROTATED) or the current one again (REISSUED, reuse grace). */
export type SessionPair = Pick<
  Selectable<SessionsTable>,
  'accessJti' | 'accessExpiresAt' | 'refreshJti' | 'refreshExpiresAt'
>

export type RotationOutcome =
  | ({ outcome: 'ROTATED'; role: Role } & SessionPair)
  | ({ outcome: 'REISSUED'; role: Role } & SessionPair)
  | { outcome: 'SESSION_ENDED'; reason: RevocationReason | null }
  | { outcome: 'UNKNOWN_TENANT' | 'INACTIVE_TENANT' | 'REUSED' | 'INACTIVE_USER' }

/** The address budget's count, taken in the same statement: over the limit, nothing else ran. */
export interface BudgetHit {
  hits: number
  resetsAt: Date
}

/**
 * Counts the request against the address budget and, within it, checks the tenant, session and user and rotates
 * the session's tokens (svc_rotate_session): one statement, one round trip. The refresh token the last rotation
 * replaced, presented within `reuseGraceSeconds` of it, answers REISSUED with the session's current pair. The function learns whether the count
 * is within the budget and, beyond it, answers OVER_BUDGET without reading or writing anything. It is called in
 * FROM: in the select list, `(f(...)).*` would run it once per output column. The
 * statement is its own transaction and binds the tenant itself, so this takes the root handle, not a request
 * transaction; a reuse revocation commits even though the caller then answers with an error.
 */
export async function rotateSessionWithinBudget(
  db: Kysely<DB>,
  budget: { key: string; limit: number },
  { presented, next, now, reuseGraceSeconds }: SessionRotation,
): Promise<{ hit: BudgetHit; rotation: RotationOutcome | null }> {
  const { rows } = await sql<
    { hits: number; windowStart: Date; outcome: RotationOutcome['outcome'] | 'OVER_BUDGET'; reason: RevocationReason | null; role: Role | null } & {
      [K in keyof SessionPair]: SessionPair[K] | null
    }
  >`
    with hit as (
      insert into rate_limit_windows as w (key, window_start, hits)
      values (${budget.key}, date_trunc('minute', now()), 1)
      on conflict (key, window_start) do update set hits = w.hits + 1
      returning hits, window_start
    )
    select hit.hits, hit.window_start, r.outcome, r.reason, r.role, r.access_jti, r.access_expires_at, r.refresh_jti,
           r.refresh_expires_at
    from hit cross join lateral svc_rotate_session(
      ${presented.tenantId}::bigint, ${presented.tenantSlug}::text, ${presented.sid}::uuid,
      ${presented.userId}::bigint, ${presented.refreshJti}::uuid,
      ${next.accessJti}::uuid, ${next.accessExpiresAt}::timestamptz,
      ${next.refreshJti}::uuid, ${next.refreshExpiresAt}::timestamptz,
      ${now}::timestamptz, hit.hits <= ${budget.limit}, ${reuseGraceSeconds}::integer) r`.execute(db)
  const { hits, windowStart, ...rotation } = rows[0]!
  const hit = { hits, resetsAt: rateWindowEnd(windowStart) }
  return { hit, rotation: rotation.outcome === 'OVER_BUDGET' ? null : (rotation as RotationOutcome) }
}
