import { sql, type Kysely, type Selectable } from 'kysely'
import type { DB, RevocationReason, Role, SessionsTable } from '../../schema.js'
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
 * Checks the address budget and, within it, the tenant, session and user, rotates the session's tokens and counts
 * the request (svc_rotate_session, db/functions): one statement, one round trip. The refresh token the last rotation
 * replaced, presented within `reuseGraceSeconds` of it, answers REISSUED with the session's current pair. Beyond the
 * budget the function answers OVER_BUDGET, reading and writing nothing but the count. It is called in FROM: in the
 * select list, `(f(...)).*` would run it once per output column. The statement is its own transaction and binds the
 * tenant itself, so this takes the root handle, not a request transaction; a reuse revocation commits even though
 * the caller then answers with an error.
 */
export async function rotateSessionWithinBudget(
  db: Kysely<DB>,
  budget: { key: string; limit: number },
  { presented, next, now, reuseGraceSeconds }: SessionRotation,
): Promise<{ hit: BudgetHit; rotation: RotationOutcome | null }> {
  const { rows } = await sql<
    {
      budgetHits: number
      budgetWindowStart: Date
      outcome: RotationOutcome['outcome'] | 'OVER_BUDGET'
      reason: RevocationReason | null
      role: Role | null
    } & { [K in keyof SessionPair]: SessionPair[K] | null }
  >`
    select r.budget_hits, r.budget_window_start, r.outcome, r.reason, r.role, r.access_jti, r.access_expires_at,
           r.refresh_jti, r.refresh_expires_at
    from svc_rotate_session(
      ${presented.tenantId}::bigint, ${presented.tenantSlug}::text, ${presented.sid}::uuid,
      ${presented.userId}::bigint, ${presented.refreshJti}::uuid,
      ${next.accessJti}::uuid, ${next.accessExpiresAt}::timestamptz,
      ${next.refreshJti}::uuid, ${next.refreshExpiresAt}::timestamptz,
      ${now}::timestamptz, ${budget.key}::text, ${budget.limit}::integer, ${reuseGraceSeconds}::integer) r`.execute(db)
  const { budgetHits, budgetWindowStart, ...rotation } = rows[0]!
  const hit = { hits: budgetHits, resetsAt: rateWindowEnd(budgetWindowStart) }
  return { hit, rotation: rotation.outcome === 'OVER_BUDGET' ? null : (rotation as RotationOutcome) }
}
