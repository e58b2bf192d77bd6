import type { FastifyInstance } from 'fastify'
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { beforeAll, describe, expect, it } from 'vitest'
import { withServiceTransaction } from '../../db/tenant-transaction.js'
import { encodeAuditCursor } from '../../lib/audit/audit-cursor.js'
import { AUDIT_TOTAL_CAP } from '../../lib/audit/audit-log-page.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner, type TenantRow } from '../support/fixtures.js'
import { describePostgres, itPipelined, useTestApp } from '../support/helper.js'
import { academy, type Actor } from '../support/staff-fixtures.js'
import { recordQueries, type RecordedQuery } from '../support/statement-recorder.js'

interface Item {
  id: number
  type: string
  actorId: number | null
  occurredAt: string
}

interface Page {
  items: Item[]
  page: number
  perPage: number
  total: number
  totalExact: boolean
  totalPages: number
  hasNext: boolean
  nextCursor: string | null
}

/**
 * `count` events of the tenant, set-based as the owner: a type and an actor each by `pick(g)`, instants going back
 * 0.3 ms at a time, so several share a millisecond and, every third one, the very same microsecond (the id breaks
 * those ties). Anything a page must place exactly.
 */
async function insertEvents(tenant: TenantRow, count: number, pick: { types: string[]; actors: (number | null)[] }) {
  await sql`
    insert into audit_events (tenant_id, type, actor_id, target_type, target_id, occurred_at)
    select ${tenant.id}, (${pick.types}::text[])[1 + g % ${pick.types.length}],
      (${pick.actors}::bigint[])[1 + g % ${pick.actors.length}], 'USER', g::text,
      now() - interval '1 hour' - (g / 3) * interval '300 microseconds'
    from generate_series(1, ${count}) g`.execute(owner())
}

/** The tenant's events as the log orders them (newest first, the id breaking ties), as the owner reads them. */
async function inLogOrder(tenant: TenantRow, where: { type?: string; actorId?: number; from?: Date; to?: Date } = {}): Promise<number[]> {
  let query = owner().selectFrom('auditEvents').select('id').where('tenantId', '=', tenant.id)
  if (where.type !== undefined) query = query.where('type', '=', where.type as never)
  if (where.actorId !== undefined) query = query.where('actorId', '=', where.actorId)
  if (where.from !== undefined) query = query.where('occurredAt', '>=', where.from)
  if (where.to !== undefined) query = query.where('occurredAt', '<', where.to)
  const rows = await query.orderBy('occurredAt', 'desc').orderBy('id', 'desc').execute()
  return rows.map((row) => row.id)
}

async function get(app: FastifyInstance, who: Actor, query: string): Promise<Page> {
  const response = await app.inject({ method: 'GET', url: `/v1/audit-events?${query}`, headers: who.headers })
  expect(response.statusCode, response.body).toBe(200)
  return response.json()
}

/** Every page from the first, each asked for with the previous answer's nextCursor. */
async function walk(app: FastifyInstance, who: Actor, query: string): Promise<Page[]> {
  const pages = [await get(app, who, query)]
  while (pages.at(-1)!.nextCursor !== null) {
    pages.push(await get(app, who, `${query}&cursor=${pages.at(-1)!.nextCursor}`))
  }
  return pages
}

const ids = (pages: Page[]) => pages.flatMap((page) => page.items.map((item) => item.id))

describe('GET /v1/audit-events paging', () => {
  const app = useTestApp()

  it('answers page N with the events offset paging gave it, and the same events again after the cursor of page N - 1', async () => {
    const { tenant, owner: boss } = await academy(app.current)
    await insertEvents(tenant, 250, { types: ['LOGIN_SUCCEEDED', 'SMS_ACCEPTED'], actors: [boss.user.id] })
    const expected = await inLogOrder(tenant)

    const seventh = await get(app.current, boss, 'page=7&size=20')
    expect(seventh.items.map((item) => item.id)).toEqual(expected.slice(140, 160))
    expect(seventh).toMatchObject({ page: 7, perPage: 20, total: 250, totalExact: true, totalPages: 13, hasNext: true })

    const pages = await walk(app.current, boss, 'size=20')
    expect(ids(pages)).toEqual(expected)
    expect(pages.map((page) => page.page)).toEqual([...Array(13).keys()])
    expect(pages[7]).toEqual(seventh)
    expect(pages.at(-1)).toMatchObject({ page: 12, hasNext: false, nextCursor: null, total: 250, totalPages: 13 })
    expect(pages.at(-1)!.items).toHaveLength(10)
    // Beyond the end by number: nothing, and nothing after it.
    expect(await get(app.current, boss, 'page=13&size=20')).toMatchObject({ items: [], hasNext: false, nextCursor: null, total: 250 })
  })

  it('applies type, actorId, from and to on pages by number and after a cursor, and in the total', async () => {
    const { tenant, owner: boss, manager } = await academy(app.current)
    const types = ['LOGIN_SUCCEEDED', 'LOGIN_FAILED', 'SMS_ACCEPTED', 'USER_CREATED']
    await insertEvents(tenant, 240, { types, actors: [boss.user.id, manager.user.id, null] })
    const all = await inLogOrder(tenant)
    const stored = await owner().selectFrom('auditEvents').select(['id', 'occurredAt']).where('tenantId', '=', tenant.id).execute()
    const at = new Map(stored.map((row) => [row.id, row.occurredAt]))
    const from = at.get(all[180]!)!
    const to = at.get(all[20]!)!

    const filters = [
      [`type=LOGIN_FAILED`, { type: 'LOGIN_FAILED' }],
      [`actorId=${manager.user.id}`, { actorId: manager.user.id }],
      [`type=SMS_ACCEPTED&actorId=${boss.user.id}`, { type: 'SMS_ACCEPTED', actorId: boss.user.id }],
      [`from=${from.toISOString()}&to=${to.toISOString()}`, { from, to }],
      [`type=LOGIN_SUCCEEDED&actorId=${boss.user.id}&from=${from.toISOString()}`, { type: 'LOGIN_SUCCEEDED', actorId: boss.user.id, from }],
    ] as const
    for (const [query, where] of filters) {
      const expected = await inLogOrder(tenant, where)
      expect(expected.length).toBeGreaterThan(7)
      const pages = await walk(app.current, boss, `size=7&${query}`)
      expect(ids(pages), query).toEqual(expected)
      expect(pages[0], query).toMatchObject({ total: expected.length, totalExact: true, totalPages: Math.ceil(expected.length / 7) })
      const second = await get(app.current, boss, `size=7&page=1&${query}`)
      expect(second.items.map((item) => item.id), query).toEqual(expected.slice(7, 14))
    }
  })

  it(`counts exactly up to ${AUDIT_TOTAL_CAP.toLocaleString('en')} events and says "at least" beyond, while hasNext stays exact`, async () => {
    const { tenant, owner: boss } = await academy(app.current)
    await insertEvents(tenant, AUDIT_TOTAL_CAP, { types: ['USER_CREATED'], actors: [null] })
    expect(await get(app.current, boss, 'size=100')).toMatchObject({ total: AUDIT_TOTAL_CAP, totalExact: true, totalPages: 100, hasNext: true })
    expect(await get(app.current, boss, 'size=100&page=99')).toMatchObject({ hasNext: false, nextCursor: null })

    await insertEvents(tenant, 1, { types: ['USER_CREATED'], actors: [null] })
    const capped = await get(app.current, boss, 'size=100')
    expect(capped).toMatchObject({ total: AUDIT_TOTAL_CAP, totalExact: false, totalPages: 100 })
    const last = await get(app.current, boss, 'size=100&page=100')
    expect(last).toMatchObject({ total: AUDIT_TOTAL_CAP, totalExact: false, hasNext: false, nextCursor: null })
    expect(last.items).toHaveLength(1)
  })

  it('pages after a cursor naming no event of the tenant as after any other instant, and never shows another tenant', async () => {
    const first = await academy(app.current)
    const second = await academy(app.current)
    await insertEvents(first.tenant, 30, { types: ['USER_CREATED'], actors: [null] })
    await insertEvents(second.tenant, 5, { types: ['USER_CREATED'], actors: [null] })
    await owner().updateTable('auditEvents').set({ occurredAt: sql`occurred_at - interval '1 day'` }).where('tenantId', '=', second.tenant.id).execute()
    const firstPage = await get(app.current, first.owner, 'size=10')
    // The first tenant's cursor in the second tenant's request: the second's events older than that instant, all.
    const borrowed = await get(app.current, second.owner, `size=10&cursor=${firstPage.nextCursor}`)
    expect(borrowed.items.map((item) => item.id)).toEqual(await inLogOrder(second.tenant))
    expect(borrowed.items).toHaveLength(5)
    const future = encodeAuditCursor({ page: 3, occurredMicros: Date.now() * 1000 + 3_600_000_000, id: Number.MAX_SAFE_INTEGER })
    const fromTheFuture = await get(app.current, second.owner, `size=10&cursor=${future}`)
    expect(fromTheFuture).toMatchObject({ page: 3, total: 5, hasNext: false, nextCursor: null })
    expect(fromTheFuture.items.map((item) => item.id)).toEqual(await inLogOrder(second.tenant))
  })

  it('refuses a cursor it did not write with 400 VALIDATION_FAILED', async () => {
    const { owner: boss } = await academy(app.current)
    const encoded = (text: string) => Buffer.from(text).toString('base64url')
    const refused = [
      'not+base64',
      'A'.repeat(65),
      encoded('1.2'),
      encoded('1.2.3.4'),
      encoded('1.2.0'),
      encoded('01.2.3'),
      encoded('1.-0.3'),
      encoded('1.99999999999999999.3'),
      encoded('1.9007199254740993.3'),
      `${encoded('1.2.3')}A`,
      encoded('1.2.3\n'),
      '',
    ]
    for (const cursor of refused) {
      const response = await app.current.inject({ method: 'GET', url: `/v1/audit-events?cursor=${encodeURIComponent(cursor)}`, headers: boss.headers })
      expectProblem(response, 400, 'VALIDATION_FAILED')
    }
  })
})

interface PlanNode {
  'Relation Name'?: string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  'Rows Removed by Index Recheck'?: number
  Plans?: PlanNode[]
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)]
}

function literal(value: unknown): string {
  if (typeof value === 'number') return String(value)
  return `'${(value instanceof Date ? value.toISOString() : String(value)).replaceAll("'", "''")}'`
}

/**
 * What the statements of a page really read, counted by PostgreSQL (EXPLAIN ANALYZE) rather than timed: every row a
 * scan of audit_events produced or threw away. On a tenant whose log is far longer than the count's cap, so a count
 * or a page that read the log would show it. The recorder observes the pg driver: PostgreSQL only.
 */
describePostgres('GET /v1/audit-events reads what it answers, not the log', () => {
  const app = useTestApp()
  const LOG = 30_000
  let shop: Awaited<ReturnType<typeof academy>>

  beforeAll(async () => {
    shop = await academy(app.current)
    const { owner: boss, manager, instructor } = shop
    await insertEvents(shop.tenant, 12_000, { types: ['LOGIN_SUCCEEDED'], actors: [boss.user.id] })
    await insertEvents(shop.tenant, 12_000, { types: ['LOGIN_SUCCEEDED'], actors: [manager.user.id] })
    await insertEvents(shop.tenant, LOG - 24_003, { types: ['SMS_ACCEPTED'], actors: [boss.user.id] })
    await insertEvents(shop.tenant, 3, { types: ['TEMPLATE_CREATED'], actors: [instructor.user.id] })
    await sql`analyze audit_events`.execute(owner())
  }, 60_000)

  /** The statements the request sent that read audit_events, with their values. */
  async function auditStatements(query: string): Promise<RecordedQuery[]> {
    const { result, queries } = await recordQueries(() =>
      app.current.inject({ method: 'GET', url: `/v1/audit-events?${query}`, headers: shop.owner.headers }),
    )
    expect(result.statusCode, result.body).toBe(200)
    return queries.filter((recorded) => /from "audit_events"/.test(recorded.text))
  }

  /**
   * Rows the statement's scans of audit_events produced or filtered out, as svc_app under RLS, from the generic plan
   * the service runs it from (planOnce): made without the values, so what it reads here it reads for any tenant.
   */
  async function rowsRead(statement: RecordedQuery): Promise<number> {
    const name = `audit_read_${randomUUID().replaceAll('-', '')}`
    return withServiceTransaction(app.current.db, async (trx) => {
      await sql`select set_config('app.tenant_id', ${String(shop.tenant.id)}, true)`.execute(trx)
      await sql`set local plan_cache_mode = force_generic_plan`.execute(trx)
      await sql.raw(`prepare ${name} as ${statement.text}`).execute(trx)
      const values = statement.values.length > 0 ? `(${statement.values.map(literal).join(', ')})` : ''
      const { rows } = await sql
        .raw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (analyze, format json) execute ${name}${values}`)
        .execute(trx)
      await sql.raw(`deallocate ${name}`).execute(trx)
      return nodesOf(rows[0]!['QUERY PLAN'][0].Plan)
        .filter((node) => node['Relation Name'] === 'audit_events')
        .reduce((sum, node) => sum + node['Actual Rows'] * node['Actual Loops'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0), 0)
    })
  }

  /** A cursor naming the event `depth` events into the log (as filtered by `type`), as an answer would have. */
  async function cursorAt(depth: number, type?: string): Promise<string> {
    let query = owner()
      .selectFrom('auditEvents')
      .select(['id', sql<number>`(extract(epoch from occurred_at) * 1000000)::int8`.as('micros')])
      .where('tenantId', '=', shop.tenant.id)
    if (type !== undefined) query = query.where('type', '=', type as never)
    const row = await query.orderBy('occurredAt', 'desc').orderBy('id', 'desc').offset(depth - 1).limit(1).executeTakeFirstOrThrow()
    return encodeAuditCursor({ page: depth / 20, occurredMicros: row.micros, id: row.id })
  }

  it('reads at most the page and one more event, and counts at most the cap and one more, whatever the filter or depth', async () => {
    const { owner: boss, manager, instructor } = shop
    const midway = (await owner().selectFrom('auditEvents').select('occurredAt').where('tenantId', '=', shop.tenant.id)
      .orderBy('occurredAt', 'desc').offset(LOG / 2).limit(1).executeTakeFirstOrThrow()).occurredAt
    const queries = [
      'size=20',
      'size=20&type=LOGIN_SUCCEEDED',
      `size=20&actorId=${instructor.user.id}`,
      `size=20&actorId=${boss.user.id}&type=SMS_ACCEPTED`,
      `size=20&actorId=${manager.user.id}&from=${midway.toISOString()}`,
      `size=20&to=${midway.toISOString()}`,
      `size=20&cursor=${await cursorAt(LOG - 40)}`,
      `size=20&type=LOGIN_SUCCEEDED&cursor=${await cursorAt(20_000, 'LOGIN_SUCCEEDED')}`,
      // By number: the index entries of the pages before it (never their events), then its own page.
      `size=20&page=100&actorId=${manager.user.id}`,
    ]
    for (const query of queries) {
      const statements = await auditStatements(query)
      expect(statements, query).toHaveLength(query.includes('page=') ? 3 : 2)
      for (const statement of statements) {
        const reads = /"counted"/.test(statement.text) ? 'count' : / offset /.test(statement.text) ? 'pages before' : 'page'
        const bound = { count: AUDIT_TOTAL_CAP + 1, 'pages before': 100 * 20, page: 21 }[reads]
        const read = await rowsRead(statement)
        expect({ query, reads, read }).toEqual({ query, reads, read: expect.toSatisfy((rows: number) => rows <= bound) })
      }
    }
  }, 60_000)

  itPipelined('sends both statements prepared, to run from their generic plan', async () => {
    const { queries } = await recordQueries(() =>
      app.current.inject({ method: 'GET', url: `/v1/audit-events?type=LOGIN_SUCCEEDED`, headers: shop.owner.headers }),
    )
    const at = queries.findIndex((recorded) => /from "audit_events"/.test(recorded.text))
    expect(queries[at - 1]?.text).toBe('set local plan_cache_mode = force_generic_plan')
    for (const statement of queries.slice(at, at + 2)) {
      expect(statement.text).toMatch(/from "audit_events"/)
      expect(statement.name).toBeDefined()
    }
  })
})
