import { sql, type RawBuilder } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgres, type Database } from '../../db/database.js'
import { withServiceTransaction } from '../../db/tenant-transaction.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { buildTestApp, itPostgres } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import { DAY_MS, insertOldMessage, openPastRange } from '../sms/sms-retention-fixtures.js'

/** The retention the isolated database's migration stored for both (the settings' defaults). */
const OWNER_DAYS = 400

/**
 * The purges are SECURITY DEFINER functions the runtime role calls every minute, across tenants. Whatever that role
 * sends, they remove only what is older than the owner's retention: on a database of its own, since a purge that
 * failed this would reach every other test file's rows.
 */
describe('the retention a purge applies is the owner setting, never the runtime role', () => {
  let iso: IsolatedDatabase
  let runtime: Database

  beforeAll(async () => {
    iso = await isolatedDatabase()
    runtime = iso.open(2)
  })
  afterAll(async () => {
    await runtime?.close()
    await iso?.drop()
  })

  /** A tenant with audit events and staff messages of the given ages in days, placed as the service leaves them. */
  async function tenantWithHistory(eventAges: number[], messageAges: number[]) {
    const tenant = await insertTenantAndSender(iso.owner)
    for (const days of eventAges) {
      await sql`
        insert into audit_events (tenant_id, type, occurred_at)
        values (${tenant.tenantId}, 'USER_CREATED', now() - make_interval(days => ${days}))`.execute(iso.owner)
    }
    // Each message in the range of ids opened before it was accepted: the row purge skips younger ranges.
    for (const days of messageAges) {
      const range = await openPastRange(iso.owner, Math.ceil(days / 30) + 1)
      const offset = 1000 + Math.floor(Math.random() * 1e6)
      await insertOldMessage(iso.owner, tenant, new Date(Date.now() - days * DAY_MS), range.start + offset)
    }
    return tenant
  }

  /** What is left of the tenant's history: the age in whole days of every event and every message, youngest first. */
  async function left(tenantId: number) {
    const { rows: events } = await sql<{ days: number }>`
      select floor(extract(epoch from now() - occurred_at) / 86400)::int as days from audit_events
      where tenant_id = ${tenantId} order by 1`.execute(iso.owner)
    const { rows: messages } = await sql<{ days: number }>`
      select floor(extract(epoch from now() - created_at) / 86400)::int as days from sms_messages
      where tenant_id = ${tenantId} order by 1`.execute(iso.owner)
    return { events: events.map((row) => row.days), messages: messages.map((row) => row.days) }
  }

  /** Statements in one runtime transaction (svc_app, no tenant bound), as the minute job runs; false when refused. */
  async function asRuntime(...statements: RawBuilder<unknown>[]): Promise<boolean> {
    try {
      await withServiceTransaction(runtime.db, async (trx) => {
        for (const statement of statements) await statement.execute(trx)
      })
      return true
    } catch {
      return false
    }
  }

  /** Every purge or retention function the runtime role may execute, each with every argument set to `value`. */
  async function everyPurgeCall(value: number): Promise<Array<{ name: string; call: RawBuilder<unknown> }>> {
    const { rows } = await sql<{ name: string; args: number }>`
      select p.proname as name, p.pronargs as args from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.proname ~ '^svc_.*(purge|retention)'
        and has_function_privilege('svc_app', p.oid, 'execute')
      order by 1, 2`.execute(iso.owner)
    return rows.map(({ name, args }) => ({
      name,
      call: sql`select ${sql.id(name)}(${sql.join(Array.from({ length: args }, () => sql`${value}::int`))})`,
    }))
  }

  it('keeps what is younger than the owner retention, whatever the runtime role passes to a purge or writes to the setting', async () => {
    const tenant = await tenantWithHistory([2, OWNER_DAYS - 1, OWNER_DAYS + 1], [2, OWNER_DAYS + 1])

    // Every function it may call, every argument one day (or a huge batch), and the argument forms of before.
    const calls = [...(await everyPurgeCall(1)), ...(await everyPurgeCall(100_000))]
    expect(new Set(calls.map((call) => call.name))).toEqual(new Set(['svc_purge_audit_events', 'svc_purge_expired', 'svc_purge_old_sms']))
    for (const { call } of calls) expect(await asRuntime(call)).toBe(true)
    await asRuntime(sql`select svc_purge_audit_events(1, 100000)`)
    await asRuntime(sql`select svc_purge_old_sms(1, 100000)`)
    expect(await asRuntime(sql`select svc_sms_ranges_past_retention(1)`)).toBe(false)
    expect(await left(tenant.tenantId)).toEqual({ events: [2, OWNER_DAYS - 1], messages: [2] })

    // The setting itself: neither changed nor removed, nor stood in for by a temporary table of the same name.
    expect(await asRuntime(sql`update retention_settings set audit_days = 1, sms_days = 1`)).toBe(false)
    expect(
      await asRuntime(sql`
        insert into retention_settings (id, audit_days, sms_days) values (true, 1, 1)
        on conflict (id) do update set audit_days = 1, sms_days = 1`),
    ).toBe(false)
    expect(await asRuntime(sql`delete from retention_settings`)).toBe(false)
    expect(await asRuntime(sql`truncate retention_settings`)).toBe(false)
    const shadowed = await asRuntime(
      sql`create temporary table retention_settings (id boolean, audit_days integer, sms_days integer, updated_at timestamptz) on commit drop`,
      sql`insert into retention_settings values (true, 1, 1, now())`,
      ...(await everyPurgeCall(100_000)).map((purge) => purge.call),
    )
    expect(shadowed).toBe(true)
    expect(await left(tenant.tenantId)).toEqual({ events: [2, OWNER_DAYS - 1], messages: [2] })
    const { rows } = await sql`select audit_days, sms_days from retention_settings`.execute(iso.owner)
    expect(rows).toEqual([{ auditDays: OWNER_DAYS, smsDays: OWNER_DAYS }])
  })

  it("ignores an instance's own SVC_AUDIT_RETENTION_DAYS and SVC_SMS_RETENTION_DAYS: its jobs apply the owner retention", async () => {
    const tenant = await tenantWithHistory([2, OWNER_DAYS + 1], [2])
    const app = await buildTestApp({ DATABASE_URL: iso.url, SVC_AUDIT_RETENTION_DAYS: '1', SVC_SMS_RETENTION_DAYS: '1' })
    try {
      await app.purgeExpired()
      await app.smsRetention.purgeOldMessages()
    } finally {
      await app.close()
    }
    expect(await left(tenant.tenantId)).toEqual({ events: [2], messages: [2] })
  })

  itPostgres("stores the migrating environment's retention as the owner setting, which the runtime role may only read", async () => {
    const migrate = async (auditDays: number, smsDays: number) => {
      const migrating = openPostgres(iso.ownerUrl, 1, { retention: { auditDays, smsDays } })
      await migrating.migrate()
      await migrating.close()
    }
    await migrate(30, 60)
    try {
      const { rows } = await sql`select audit_days, sms_days from retention_settings`.execute(runtime.db)
      expect(rows).toEqual([{ auditDays: 30, smsDays: 60 }])
      const tenant = await tenantWithHistory([29, 31], [])
      expect(await asRuntime(sql`select svc_purge_audit_events(1000)`)).toBe(true)
      expect((await left(tenant.tenantId)).events).toEqual([29])
    } finally {
      await migrate(OWNER_DAYS, OWNER_DAYS)
    }
  })
})
