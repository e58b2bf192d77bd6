import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { storeRetentionSettings } from '../../db/repos/audit/retention-settings.js'
import { withTenant } from '../../db/tenant-transaction.js'
import type { AuditEventType } from '../../lib/audit/event-types.js'
import { recordAuditEvent, type AuditOrigin } from '../../lib/audit/record.js'
import { storedAuditEvents } from './audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { owner, type TenantRow } from '../support/fixtures.js'
import { itPostgres, useTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

const DENIED = { code: '42501' }

/** Writes an event as the runtime role would (a tenant transaction of the app's runtime database). */
async function record(app: FastifyInstance, tenant: TenantRow, type: AuditEventType, origin: Partial<AuditOrigin> = {}, targetId: string | number = 1) {
  await withTenant(app.db, tenant.id, (trx) =>
    recordAuditEvent(trx, tenant.id, { actorId: null, ipAddress: null, requestId: null, ...origin }, { type, targetId, details: { note: type } }),
  )
}

async function backdate(tenant: TenantRow, type: AuditEventType, days: number) {
  await owner()
    .updateTable('auditEvents')
    .set({ occurredAt: sql`now() - make_interval(days => ${days})` })
    .where('tenantId', '=', tenant.id)
    .where('type', '=', type)
    .execute()
}

function list(app: FastifyInstance, who: Actor, query = '') {
  return app.inject({ method: 'GET', url: `/v1/audit-events${query}`, headers: who.headers })
}

describe('GET /v1/audit-events', () => {
  const app = useTestApp()

  it('answers the tenant its events newest first, with every field', async () => {
    const { tenant, owner: boss } = await academy(app.current)
    await record(app.current, tenant, 'TEMPLATE_CREATED', { actorId: boss.user.id, ipAddress: '203.0.113.9', requestId: 'req-1' }, 7)
    await record(app.current, tenant, 'SMS_ACCEPTED', { actorId: boss.user.id, requestId: 'req-2' }, 42)

    const response = await list(app.current, boss)
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body).toMatchObject({ page: 0, perPage: 20, total: 2, totalPages: 1, hasNext: false })
    expect(body.items.map((item: { type: string }) => item.type)).toEqual(['SMS_ACCEPTED', 'TEMPLATE_CREATED'])
    expect(body.items[1]).toEqual({
      id: expect.any(Number),
      type: 'TEMPLATE_CREATED',
      occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      actorId: boss.user.id,
      targetType: 'SMS_TEMPLATE',
      targetId: '7',
      ipAddress: '203.0.113.9',
      requestId: 'req-1',
      details: { note: 'TEMPLATE_CREATED' },
    })
  })

  it('filters by type, actor and time, and pages without overlap', async () => {
    const { tenant, owner: boss, manager } = await academy(app.current)
    for (let i = 0; i < 5; i++) await record(app.current, tenant, 'LOGIN_SUCCEEDED', { actorId: manager.user.id }, i)
    await record(app.current, tenant, 'PASSWORD_CHANGED', { actorId: boss.user.id })
    await record(app.current, tenant, 'USER_CREATED')
    await backdate(tenant, 'USER_CREATED', 3)

    const byType = (await list(app.current, boss, '?type=LOGIN_SUCCEEDED&size=2')).json()
    expect(byType).toMatchObject({ total: 5, totalPages: 3, hasNext: true })
    const pages = await Promise.all([0, 1, 2].map((page) => list(app.current, boss, `?type=LOGIN_SUCCEEDED&size=2&page=${page}`)))
    const targets = pages.flatMap((page) => page.json().items.map((item: { targetId: string }) => item.targetId))
    expect(targets).toEqual(['4', '3', '2', '1', '0'])

    const byActor = (await list(app.current, boss, `?actorId=${boss.user.id}`)).json()
    expect(byActor.items.map((item: { type: string }) => item.type)).toEqual(['PASSWORD_CHANGED'])

    const dayAgo = new Date(Date.now() - 86_400_000).toISOString()
    const recent = (await list(app.current, boss, `?from=${dayAgo}`)).json()
    expect(recent.total).toBe(6)
    const old = (await list(app.current, boss, `?to=${dayAgo}`)).json()
    expect(old.items.map((item: { type: string }) => item.type)).toEqual(['USER_CREATED'])
  })

  it("never shows another tenant's events", async () => {
    const first = await academy(app.current)
    const second = await academy(app.current)
    await record(app.current, first.tenant, 'SMS_CANCELLED', {}, 99)
    const response = await list(app.current, second.owner)
    expect(response.json()).toMatchObject({ total: 0, items: [] })
    expect((await list(app.current, first.owner)).json().total).toBe(1)
  })

  it('is for the OWNER only: a MANAGER, an INSTRUCTOR and a STUDENT are refused, and no token is 401', async () => {
    const { manager, instructor, student } = await academy(app.current)
    for (const who of [manager, instructor, student]) expectProblem(await list(app.current, who), 403, 'AUTH_008')
    expectProblem(await app.current.inject({ method: 'GET', url: '/v1/audit-events' }), 401, 'AUTH_002')
  })

  it('refuses bad filters with 400 VALIDATION_FAILED', async () => {
    const { owner: boss } = await academy(app.current)
    for (const query of ['?type=NOT_A_TYPE', '?actorId=abc', '?actorId=0', '?from=yesterday', '?to=2026-13-01T00:00:00Z', '?size=101', '?page=-1']) {
      expectProblem(await list(app.current, boss, query), 400, 'VALIDATION_FAILED')
    }
  })
})

describe('the audit log is append-only for the runtime role', () => {
  const app = useTestApp()
  const asRuntime = (tenant: TenantRow, statement: ReturnType<typeof sql>) =>
    withTenant(app.current.db, tenant.id, (trx) => statement.execute(trx))

  itPostgres('can neither update nor delete nor truncate its own events', async () => {
    const { tenant } = await academy(app.current)
    await record(app.current, tenant, 'LOGIN_SUCCEEDED')
    await expect(asRuntime(tenant, sql`update audit_events set type = 'LOGIN_FAILED'`)).rejects.toMatchObject(DENIED)
    await expect(asRuntime(tenant, sql`delete from audit_events`)).rejects.toMatchObject(DENIED)
    await expect(asRuntime(tenant, sql`truncate audit_events`)).rejects.toMatchObject(DENIED)
    expect((await storedAuditEvents(tenant)).map((event) => event.type)).toEqual(['LOGIN_SUCCEEDED'])
  })

  itPostgres("cannot write an event into another tenant's log", async () => {
    const first = await academy(app.current)
    const second = await academy(app.current)
    await expect(
      asRuntime(first.tenant, sql`insert into audit_events (tenant_id, type) values (${second.tenant.id}, 'USER_DELETED')`),
    ).rejects.toThrow(/row-level security/)
    expect(await storedAuditEvents(second.tenant)).toEqual([])
  })

  it('rolls an event back with the transaction that wrote it', async () => {
    const { tenant } = await academy(app.current)
    await expect(
      withTenant(app.current.db, tenant.id, async (trx) => {
        await recordAuditEvent(trx, tenant.id, { actorId: null, ipAddress: null, requestId: null }, { type: 'TEMPLATE_DELETED', targetId: 3 })
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    expect(await storedAuditEvents(tenant)).toEqual([])
  })
})

/**
 * On a database of its own: the retention is the owner's setting, stored for the whole database (the purges reach
 * every tenant), so setting it here must not reach another test file's events.
 */
describe("audit retention (the owner's stored setting)", () => {
  let iso: IsolatedDatabase
  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso?.drop()
  })
  const app = useTestApp(() => ({ env: { DATABASE_URL: iso.url } }))

  const keepFor = (auditDays: number) => storeRetentionSettings(iso.owner, { auditDays, smsDays: 400 })
  async function eventsOf(tenantId: number): Promise<string[]> {
    const rows = await iso.owner.selectFrom('auditEvents').select('type').where('tenantId', '=', tenantId).orderBy('id').execute()
    return rows.map((row) => row.type)
  }
  async function insertEvents(tenantId: number, type: AuditEventType, daysAgo: number, count = 1) {
    await sql`
      insert into audit_events (tenant_id, type, occurred_at)
      select ${tenantId}, ${type}, now() - make_interval(days => ${daysAgo}) from generate_series(1, ${count})`.execute(iso.owner)
  }

  it('removes events older than the stored retention with the minute purge, and keeps the rest', async () => {
    await keepFor(30)
    const { tenantId } = await insertTenantAndSender(iso.owner)
    await insertEvents(tenantId, 'LOGIN_FAILED', 31)
    await insertEvents(tenantId, 'LOGIN_LOCKED', 29)
    await insertEvents(tenantId, 'LOGIN_SUCCEEDED', 0)
    await app.current.purgeExpired()
    expect(await eventsOf(tenantId)).toEqual(['LOGIN_LOCKED', 'LOGIN_SUCCEEDED'])
  })

  it('removes a backlog in batches until none is left', async () => {
    await keepFor(30)
    const { tenantId } = await insertTenantAndSender(iso.owner)
    await insertEvents(tenantId, 'USER_CREATED', 40, 12001)
    await insertEvents(tenantId, 'USER_DELETED', 0)
    await app.current.purgeExpired()
    expect(await eventsOf(tenantId)).toEqual(['USER_DELETED'])
  })

  it('keeps every event with retention 0', async () => {
    await keepFor(0)
    const { tenantId } = await insertTenantAndSender(iso.owner)
    await insertEvents(tenantId, 'USER_CREATED', 3000)
    await app.current.purgeExpired()
    expect(await eventsOf(tenantId)).toEqual(['USER_CREATED'])
  })
})
