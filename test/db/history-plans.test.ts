import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { beforeAll, expect, it } from 'vitest'
import { withServiceTransaction } from '../../db/tenant-transaction.js'
import { owner } from '../support/fixtures.js'
import { describePipelined, useTestApp } from '../support/helper.js'
import { recordQueries, type RecordedQuery } from '../support/statement-recorder.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  Plans?: PlanNode[]
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)]
}

const literal = (value: unknown) => (typeof value === 'number' ? String(value) : `'${String(value).replaceAll("'", "''")}'`)

// The history pages whose statements are prepared run from their generic plan (planOnce), a plan made
// without the tenant's id. These tests make the worst case happen: many small tenants and one large one, so the
// average tenant the generic plan assumes is small, and check that its plan still walks the index in order.
describePipelined('history page plans', () => {
  const app = useTestApp()
  let large: Awaited<ReturnType<typeof academy>>

  beforeAll(async () => {
    large = await academy(app.current)
    const staff = (who: Actor) => who.user.id
    await sql`
      insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
        estimated_segments, unit_price, total_price, status, provider, next_attempt_at, sent_at, created_at, updated_at)
      select ${large.tenant.id}, case when g % 50 = 0 then ${staff(large.instructor)}::bigint else ${staff(large.owner)}::bigint end,
        'CUSTOM', 1, 'Notice ' || g, 'Hello {name}', 'SMS', 1, 20, 20,
        (array['PENDING','SENT','FAILED','CANCELLED'])[1 + g % 4], 'mock', now() + interval '365 days',
        case when g % 2 = 0 then now() - make_interval(secs => g) end, now() - make_interval(secs => g), now()
      from generate_series(1, 5000) g`.execute(owner())
    const slug = `plans-${randomUUID().slice(0, 8)}`
    await sql`
      with tenant as (
        insert into tenants (slug, custom_id, name, updated_at)
        select ${slug} || '-' || g, upper(substr(md5(${slug} || g), 1, 10)), 'Small ' || g, now() from generate_series(1, 200) g
        returning id
      ), sender as (
        insert into users (tenant_id, user_login_id, password_hash, name, role, avatar_seed, updated_at)
        select id, 'sender', 'x', 'Sender', 'MANAGER', 'seed', now() from tenant
        returning id, tenant_id
      )
      insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
        estimated_segments, unit_price, total_price, status, provider, next_attempt_at, created_at, updated_at)
      select tenant_id, id, 'CUSTOM', 1, 'Small', 'Hello', 'SMS', 1, 20, 20, 'SENT', 'mock', now() + interval '365 days',
        now() - make_interval(secs => n), now()
      from sender cross join generate_series(1, 3) n`.execute(owner())
    await sql`analyze sms_messages`.execute(owner())
  })

  /**
   * The page statement GET /v1/sms/history sends for `query`, with its values, and whether the transaction ran it
   * from its generic plan (db/driver/statement-flags.ts, planOnce).
   */
  async function pageStatement(who: Actor, query: string): Promise<RecordedQuery & { fromGenericPlan: boolean }> {
    const { result, queries } = await recordQueries(() =>
      app.current.inject({ method: 'GET', url: `/v1/sms/history${query}`, headers: who.headers }),
    )
    expect(result.statusCode).toBe(200)
    const isPage = (recorded: RecordedQuery) => /from "sms_messages"/.test(recorded.text) && / limit /.test(recorded.text)
    expect(queries.filter(isPage)).toHaveLength(1)
    const at = queries.findIndex(isPage)
    return { ...queries[at]!, fromGenericPlan: queries[at - 1]?.text === 'set local plan_cache_mode = force_generic_plan' }
  }

  /** Each index of a partition -> the partitioned index it is a copy of. */
  async function indexRoots(): Promise<Map<string, string>> {
    const { rows } = await sql<{ index: string; root: string }>`
      select c.relname as index, pg_partition_root(c.oid)::regclass::text as root
      from pg_class c where c.relkind = 'i' and c.relispartition`.execute(owner())
    return new Map(rows.map((row) => [row.index, row.root]))
  }

  /** The plan PostgreSQL uses for the statement when it plans without its values, as svc_app under RLS. */
  async function genericPlan(who: Actor, statement: RecordedQuery): Promise<PlanNode[]> {
    const name = `plan_check_${randomUUID().replaceAll('-', '')}`
    return withServiceTransaction(app.current.db, async (trx) => {
      await sql`select set_config('app.tenant_id', ${String(who.tenant.id)}, true)`.execute(trx)
      await sql`set local plan_cache_mode = force_generic_plan`.execute(trx)
      await sql.raw(`prepare ${name} as ${statement.text}`).execute(trx)
      try {
        const { rows } = await sql
          .raw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) execute ${name}(${statement.values.map(literal).join(', ')})`)
          .execute(trx)
        return nodesOf(rows[0]!['QUERY PLAN'][0].Plan)
      } finally {
        await sql.raw(`deallocate ${name}`).execute(trx)
      }
    })
  }

  it.each([
    ['owner', '', 'sms_messages_history'],
    ['owner', '?sort=createdAt,asc', 'sms_messages_history'],
    ['owner', '?sort=sentAt,desc', 'sms_messages_sent_desc'],
    ['owner', '?sort=sentAt,asc', 'sms_messages_sent_asc'],
    ['owner', '?sort=status,asc', 'sms_messages_status'],
    ['owner', '?sort=status,desc&page=3', 'sms_messages_status'],
  ] as const)('prepares the %s page %j: its generic plan walks %s in order, no sort', async (role, query, index) => {
    const who = large[role]
    const statement = await pageStatement(who, query)
    expect(statement.name).toBeDefined()
    // PostgreSQL alone would plan it per run (a LIMIT parameter makes the generic plan look dear): 2 ms over 17 partitions.
    expect(statement.fromGenericPlan).toBe(true)
    const nodes = await genericPlan(who, statement)
    expect(nodes.map((node) => node['Node Type'])).not.toContain('Sort')
    expect(nodes.map((node) => node['Node Type'])).not.toContain('Incremental Sort')
    // One scan per partition of sms_messages (a month of ids each, merged in order), each of that index's copy.
    const scans = nodes.filter((node) => /^sms_messages_(legacy|p\d{6})$/.test(String(node['Relation Name'])))
    expect(scans.length).toBeGreaterThan(1)
    const roots = await indexRoots()
    for (const scan of scans) {
      expect({ type: scan['Node Type'], index: roots.get(String(scan['Index Name'])) }).toEqual({ type: 'Index Scan', index })
    }
  })

  it.each([
    ['instructor', ''],
    ['instructor', '?sort=sentAt,desc'],
    ['instructor', '?sort=status,asc'],
    ['owner', '?status=SENT'],
    ['owner', '?q=notice'],
    ['owner', '?recipientType=CUSTOM'],
  ] as const)('plans the %s page %j for its values on every run', async (role, query) => {
    const statement = await pageStatement(large[role], query)
    expect(statement.name).toBeUndefined()
    expect(statement.fromGenericPlan).toBe(false)
  })

  it('runs a message and its recipients from their generic plans: each reaches one partition, found as it runs', async () => {
    const { rows } = await sql<{ id: number }>`select id from sms_messages where tenant_id = ${large.tenant.id} limit 1`.execute(owner())
    const { result, queries } = await recordQueries(() =>
      app.current.inject({ method: 'GET', url: `/v1/sms/history/${rows[0]!.id}`, headers: large.owner.headers }),
    )
    expect(result.statusCode).toBe(200)
    const texts = queries.map((recorded) => recorded.text)
    const message = texts.findIndex((text) => /from "sms_messages" where "id" = \$1/.test(text))
    const recipients = texts.findIndex((text) => /from "sms_recipients" where "sms_id" = \$1/.test(text))
    expect(message).toBeGreaterThan(0)
    expect(texts[message - 1]).toBe('set local plan_cache_mode = force_generic_plan')
    expect(texts.slice(message + 1, recipients)).toEqual([])
    for (const at of [message, recipients]) expect(queries[at]!.name).toBeDefined()
  })
})
