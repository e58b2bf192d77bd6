import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect } from 'vitest'
import { inject } from 'vitest'
import { openPostgres } from '../../db/database.js'
import { adminQuery } from '../support/admin-query.js'
import { withDatabase } from '../support/database-url.js'
import { describePostgres, itPostgres } from '../support/helper.js'

/**
 * The operations guide allows a migrating owner that is not a superuser (CREATEROLE). Forced row-level security binds
 * such an owner, and the maintenance functions are SECURITY DEFINER (they run as the owner, with no tenant bound):
 * without the owner_maintenance policy they found no row, so retention and the usage roll-up silently did nothing.
 * Here a database is migrated by such an owner and the functions are called as the runtime role, as the minute job
 * calls them.
 */
describePostgres('maintenance under an owner that is not a superuser', () => {
  const suffix = randomBytes(4).toString('hex')
  const role = `svc_test_owner_${suffix}`
  const database = `svc_test_owned_${suffix}`
  let url: string
  let client: pg.Client

  beforeAll(async () => {
    await adminQuery(`create role ${role} login createrole nosuperuser nobypassrls`)
    await adminQuery(`create database ${database} owner ${role}`)
    const server = new URL(inject('databaseUrl'))
    server.username = role
    server.password = ''
    url = withDatabase(server.toString(), database)
    const migrating = openPostgres(url, 1, { driver: 'plain' })
    await migrating.migrate()
    await migrating.close()
    client = new pg.Client({ connectionString: url })
    await client.connect()
  }, 120_000)

  afterAll(async () => {
    await client?.end()
    await adminQuery(`drop database if exists ${database} with (force)`)
    await adminQuery(`drop role if exists ${role}`)
  })

  /** One statement as the runtime role, in a transaction of its own with no tenant bound (as the minute job runs). */
  async function asRuntime<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
    await client.query('begin')
    try {
      await client.query('set local role svc_app')
      const { rows } = await client.query<T>(text)
      await client.query('commit')
      return rows
    } catch (error) {
      await client.query('rollback')
      throw error
    }
  }

  const count = async (table: string) => Number((await client.query(`select count(*) from ${table}`)).rows[0].count)

  itPostgres('the owner really is bound by forced RLS on every other policy', async () => {
    const { rows } = await client.query('select rolsuper, rolbypassrls from pg_roles where rolname = current_user')
    expect(rows[0]).toEqual({ rolsuper: false, rolbypassrls: false })
  })

  itPostgres('removes old audit events, expired rows and moves usage deltas of every tenant', async () => {
    const tenants = (
      await client.query(`
        insert into tenants (slug, custom_id, name, updated_at)
        values ('owned-a-${suffix}', 'OA${suffix}', 'A', now()), ('owned-b-${suffix}', 'OB${suffix}', 'B', now())
        returning id`)
    ).rows.map((row) => Number(row.id))
    for (const tenant of tenants) {
      await client.query(`insert into audit_events (tenant_id, type, occurred_at) values ($1, 'USER_CREATED', now() - interval '500 days')`, [tenant])
      await client.query(`insert into audit_events (tenant_id, type) values ($1, 'USER_DELETED')`, [tenant])
      await client.query(`insert into sms_daily_usage (tenant_id, day, recipients) values ($1, current_date - 10, 5)`, [tenant])
      await client.query(`insert into sms_usage_changes (tenant_id, bucket, messages) values ($1, '2026-01-01T00:00:00Z', 2)`, [tenant])
      // Webhook events: delivered 8 days ago and given up 8 days ago go; delivered yesterday and pending stay.
      await client.query(
        `insert into webhook_events (tenant_id, event_type, body, delivered_at, given_up_at)
         values ($1, 'sms.message.completed', '{}', now() - interval '8 days', null),
                ($1, 'sms.message.completed', '{}', null, now() - interval '8 days'),
                ($1, 'sms.message.completed', '{}', now() - interval '1 day', null),
                ($1, 'sms.message.completed', '{}', null, null)`,
        [tenant],
      )
    }

    // The runtime role itself still sees nothing without a tenant.
    expect(await asRuntime('select count(*)::int as n from audit_events')).toEqual([{ n: 0 }])

    expect(await asRuntime('select svc_purge_audit_events(1000) as n')).toEqual([{ n: 2 }])
    expect((await asRuntime<{ n: number }>('select svc_purge_expired(1000) as n'))[0]!.n).toBeGreaterThanOrEqual(2)
    expect(await asRuntime(`select svc_roll_up_sms_usage('Asia/Seoul', 1000) as n`)).toEqual([{ n: 2 }])

    expect(await count('audit_events')).toBe(2)
    expect(await count('sms_daily_usage')).toBe(0)
    expect(await count('sms_usage_changes')).toBe(0)
    expect(await count('webhook_events')).toBe(4)
    const usage = await client.query('select tenant_id, messages::int from sms_usage order by tenant_id')
    expect(usage.rows).toEqual(tenants.map((tenant) => ({ tenant_id: String(tenant), messages: 2 })))
    const days = await client.query(`select tenant_id, to_char(day, 'YYYY-MM-DD') as day, messages::int from sms_usage_days order by tenant_id`)
    expect(days.rows).toEqual(tenants.map((tenant) => ({ tenant_id: String(tenant), day: '2026-01-01', messages: 2 })))
  })
})
