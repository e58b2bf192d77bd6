import { sql, type Selectable } from 'kysely'
import type { DeviceCategory, RevocationReason, SessionsTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

const SESSION_COLUMNS = [
  'sid',
  'userId',
  'deviceCategory',
  'userAgent',
  'ipAddress',
  'accessJti',
  'accessExpiresAt',
  'refreshJti',
  'refreshExpiresAt',
  'createdAt',
  'lastRefreshedAt',
] as const

export type SessionRecord = Pick<Selectable<SessionsTable>, (typeof SESSION_COLUMNS)[number]>

/**
 * Every column a new session is written with. Picked from the row type rather than Insertable, which would make
 * the nullable ones optional: a forgotten user agent or address must not compile as a silent null.
 */
export type NewSession = Pick<
  Selectable<SessionsTable>,
  | 'tenantId'
  | 'sid'
  | 'userId'
  | 'deviceCategory'
  | 'userAgent'
  | 'ipAddress'
  | 'accessJti'
  | 'accessExpiresAt'
  | 'refreshJti'
  | 'refreshExpiresAt'
>

export function listUserSessions(trx: TenantTx, userId: number): Promise<SessionRecord[]> {
  return trx
    .selectFrom('sessions')
    .select(SESSION_COLUMNS)
    .where('userId', '=', userId)
    .orderBy('createdAt', 'desc')
    .orderBy('sid')
    .execute()
}

export type SessionSelector =
  | { sid: string; userId?: number }
  | { userId: number; exceptSid?: string }

/**
 * Ends sessions in one statement: records why (kept until the refresh token would have expired), blacklists
 * each session's current access JTI until it expires, then deletes the session rows. Returns the ended sids.
 */
export async function revokeSessions(
  trx: TenantTx,
  selector: SessionSelector,
  reason: RevocationReason,
): Promise<string[]> {
  const conditions = [sql`true`]
  if ('sid' in selector) conditions.push(sql`sid = ${selector.sid}::uuid`)
  if ('userId' in selector && selector.userId !== undefined) conditions.push(sql`user_id = ${selector.userId}`)
  if ('exceptSid' in selector && selector.exceptSid) conditions.push(sql`sid <> ${selector.exceptSid}::uuid`)
  const { rows } = await sql<{ sid: string }>`
    with ended as (
      delete from sessions where ${sql.join(conditions, sql` and `)}
      returning tenant_id, sid, access_jti, access_expires_at, refresh_expires_at
    ), reasons as (
      insert into session_revocations (tenant_id, sid, reason, expires_at)
      select tenant_id, sid, ${reason}, refresh_expires_at from ended
      on conflict (tenant_id, sid) do update set reason = excluded.reason, expires_at = excluded.expires_at
    ), blacklisted as (
      insert into revoked_access_tokens (jti, expires_at)
      select access_jti, access_expires_at from ended
      on conflict (jti) do nothing
    )
    select sid from ended`.execute(trx)
  return rows.map((row) => row.sid)
}
