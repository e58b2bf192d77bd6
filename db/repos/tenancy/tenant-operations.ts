import { sql, type Kysely } from 'kysely'
import type { DB, TenantStatus } from '../../schema.js'

// Changes only operations make (npm run tenant:quota, tenant:status), as the owner: the runtime role has no UPDATE on
// tenants. Every send and every request reads these columns afresh, so a change applies at once on every instance.

/** Sets the tenant's own daily recipient quota (null: the service default); the row after, or undefined. */
export function setTenantDailyQuota(owner: Kysely<DB>, slug: string, quota: number | null) {
  return owner
    .updateTable('tenants')
    .set({ dailyRecipientQuota: quota, updatedAt: new Date() })
    .where('slug', '=', slug)
    .returning(['slug', 'dailyRecipientQuota'])
    .executeTakeFirst()
}

/** Sets the tenant's status, in one statement; the status before and after, or undefined for an unknown slug. */
export async function setTenantStatus(owner: Kysely<DB>, slug: string, status: TenantStatus) {
  const { rows } = await sql<{ slug: string; previousStatus: TenantStatus; status: TenantStatus }>`
    with before as (select id, status from tenants where slug = ${slug} for update)
    update tenants t set status = ${status}, updated_at = now() from before where t.id = before.id
    returning t.slug, before.status as "previousStatus", t.status`.execute(owner)
  return rows[0]
}
