import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

// Tables kept without RLS (docs/architecture.md#tenancy-from-token-to-row): read before any tenant context exists.
const TABLES_WITHOUT_RLS = ['owner_directory', 'passkey_directory', 'api_key_directory']
// Indexes read across tenants by the owner's maintenance only (with each partition's copy): SMS retention finds rows
// past SVC_SMS_RETENTION_DAYS by age (db/functions/svc_purge_old_sms.sql), a BRIN index of a few pages a month; the
// consent notice job finds the tenants with consents due by their age (db/functions/svc_ad_consent_notice_tenants.sql).
const MAINTENANCE_INDEXES = ['sms_messages_age', 'sms_ad_consents_due']

describe('row-level security catalog', () => {
  const app = useTestApp()

  it('protects every table with a tenant_id column: RLS enabled, forced, with a policy', async () => {
    const { rows } = await sql<{ table: string; enabled: boolean; forced: boolean; policies: number }>`
      select c.relname as table, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
             (select count(*) from pg_policy p where p.polrelid = c.oid)::int as policies
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p')
        and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped)
      order by c.relname`.execute(owner())
    const checked = rows.filter((row) => !TABLES_WITHOUT_RLS.includes(row.table))
    expect(checked.map((row) => row.table)).toContain('users')
    for (const row of checked) {
      expect({ table: row.table, enabled: row.enabled, forced: row.forced, hasPolicy: row.policies > 0 }).toEqual({
        table: row.table,
        enabled: true,
        forced: true,
        hasPolicy: true,
      })
    }
  })

  it("lets only the tables' owner past tenant_isolation (owner_maintenance, for the maintenance functions), never svc_app", async () => {
    const { rows } = await sql<{ table: string; policy: string; roles: string[]; owner: string }>`
      select c.relname as table, p.polname as policy, pg_get_userbyid(c.relowner) as owner,
             array(select case when r = 0 then 'public' else pg_get_userbyid(r) end from unnest(p.polroles) r)::text[] as roles
      from pg_policy p join pg_class c on c.oid = p.polrelid
      order by c.relname, p.polname`.execute(owner())
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      const expected = row.policy === 'owner_maintenance' ? [row.owner] : ['public']
      expect({ table: row.table, policy: row.policy, roles: row.roles }).toEqual({ table: row.table, policy: row.policy, roles: expected })
      expect(['owner_maintenance', 'tenant_isolation']).toContain(row.policy)
    }
    const tables = new Set(rows.map((row) => row.table))
    for (const table of tables) expect(rows.filter((row) => row.table === table).map((row) => row.policy)).toEqual(['owner_maintenance', 'tenant_isolation'])
  })

  it('keeps tenant_id first in every index of a protected table', async () => {
    const { rows } = await sql<{ index: string; firstColumn: string; root: string }>`
      select i.relname as index, a.attname as first_column, coalesce(pg_partition_root(i.oid), i.oid)::regclass::text as root
      from pg_index x
      join pg_class t on t.oid = x.indrelid
      join pg_class i on i.oid = x.indexrelid
      join pg_namespace n on n.oid = t.relnamespace
      join pg_attribute a on a.attrelid = t.oid and a.attnum = x.indkey[0]
      where n.nspname = current_schema() and t.relrowsecurity`.execute(owner())
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows.filter((index) => !MAINTENANCE_INDEXES.includes(index.root))) {
      expect({ index: row.index, first: row.firstColumn }).toEqual({ index: row.index, first: 'tenant_id' })
    }
  })

  it('runs requests as a role that is not superuser, owns no table and cannot bypass RLS', async () => {
    const { rows } = await sql<{ role: string; superuser: boolean; bypassrls: boolean; ownedTables: number }>`
      select current_user as role, r.rolsuper as superuser, r.rolbypassrls as bypassrls,
             (select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace
               where n.nspname = current_schema() and pg_get_userbyid(c.relowner) = current_user)::int as owned_tables
      from pg_roles r where r.rolname = current_user`.execute(app.current.db)
    expect(rows[0]).toEqual({ role: 'svc_app', superuser: false, bypassrls: false, ownedTables: 0 })
  })

  it("fixes every SECURITY DEFINER function to public then pg_temp, so no caller's temporary table stands in for a table it reads", async () => {
    // Unlisted, pg_temp is searched first: the runtime role may create temporary tables, and one named like a table a
    // definer function reads (say the retention setting) would be read with the owner's rights.
    const { rows } = await sql<{ name: string; config: string[] | null }>`
      select p.proname as name, p.proconfig as config
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = current_schema() and p.prosecdef and p.proname like 'svc\\_%'
      order by p.proname`.execute(owner())
    expect(rows.map((row) => row.name)).toContain('svc_purge_expired')
    for (const row of rows) expect({ name: row.name, config: row.config }).toEqual({ name: row.name, config: ['search_path=public, pg_temp'] })
  })
})
