import { sql, type Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import type { SeededTenant } from './seed.js'

/**
 * `count` audit events of `tenant` over the last year, set-based as the owner, as a busy academy's year leaves them:
 * mostly sign-ins of its staff, then sends, failed logins and session ends, with the details, address and request
 * id a request writes. Then VACUUM ANALYZE: autovacuum would long since have visited a table this size (it vacuums
 * after inserts too), and only a vacuumed table's index entries can be counted without visiting the rows.
 */
export async function fillAuditLog(owner: Kysely<DB>, tenant: SeededTenant, count: number): Promise<void> {
  const actors = [tenant.ownerId, ...tenant.staff.map((member) => member.id)]
  await sql`
    insert into audit_events (tenant_id, type, occurred_at, actor_id, target_type, target_id, ip_address, request_id, details)
    select ${tenant.tenantId},
      (array['LOGIN_SUCCEEDED','LOGIN_SUCCEEDED','LOGIN_SUCCEEDED','SMS_ACCEPTED','SMS_ACCEPTED','LOGIN_FAILED','SESSION_REVOKED','TEMPLATE_UPDATED'])[1 + g % 8],
      now() - make_interval(secs => g * ${(365 * 86_400) / count}::float8),
      (${actors}::bigint[])[1 + g % ${actors.length}],
      case when g % 8 in (3, 4) then 'SMS_MESSAGE' else 'USER' end, (g % 5000)::text,
      '203.0.113.' || (g % 250), 'req-' || g, jsonb_build_object('deviceCategory', 'WEB', 'sessionId', md5(g::text))
    from generate_series(1, ${count}) g`.execute(owner)
  await sql`vacuum analyze audit_events`.execute(owner)
}
