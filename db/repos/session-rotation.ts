import { sql, type Kysely } from 'kysely'
import type { DB, RevocationReason, Role } from '../schema.js'

export interface SessionRotation {
  /** What the verified refresh token claims; the database decides whether it still holds. */
  presented: { tenantId: number; tenantSlug: string; sid: string; userId: number; refreshJti: string }
  /** The session's next tokens, stored only when it rotates. */
  next: { accessJti: string; accessExpiresAt: Date; refreshJti: string; refreshExpiresAt: Date }
  /** The caller's clock, which set every expiry: last_refreshed_at, and what a stored revocation reason must outlive. */
  now: Date
}

export type RotationOutcome =
  | { outcome: 'ROTATED'; role: Role }
  | { outcome: 'SESSION_ENDED'; reason: RevocationReason | null }
  | { outcome: 'UNKNOWN_TENANT' | 'INACTIVE_TENANT' | 'REUSED' | 'INACTIVE_USER' }

/**
 * Checks the tenant, session and user and rotates the session's tokens in one statement (svc_rotate_session). The
 * statement is its own transaction and binds the tenant itself, so this takes the root handle, not a request
 * transaction; a reuse revocation commits even though the caller then answers with an error. Called in FROM: in the
 * select list, `(f(...)).*` would run the function once per output column.
 */
export async function rotateSession(db: Kysely<DB>, { presented, next, now }: SessionRotation): Promise<RotationOutcome> {
  const { rows } = await sql<RotationOutcome>`
    select outcome, reason, role from svc_rotate_session(
      ${presented.tenantId}::bigint, ${presented.tenantSlug}::text, ${presented.sid}::uuid,
      ${presented.userId}::bigint, ${presented.refreshJti}::uuid,
      ${next.accessJti}::uuid, ${next.accessExpiresAt}::timestamptz,
      ${next.refreshJti}::uuid, ${next.refreshExpiresAt}::timestamptz,
      ${now}::timestamptz)`.execute(db)
  return rows[0]!
}
