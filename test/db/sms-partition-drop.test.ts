import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { dropRangesPastRetention } from '../../db/repos/sms/sms-retention.js'
import { until } from '../support/auth-fixtures.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { describePostgres, useTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'

// A month past retention is dropped while another transaction still reads the SMS tables (a history page, a report):
// the detach waits for it, and sends and dispatches meanwhile neither wait nor fail. A plain DETACH or DROP would
// queue for an ACCESS EXCLUSIVE lock behind that reader, and every send and dispatch would queue behind it.
describePostgres('dropping a month of SMS while sends and dispatches run', () => {
  let iso: IsolatedDatabase

  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso?.drop()
  })
  const app = useTestApp(() => ({ env: { DATABASE_URL: iso.url, SVC_SMS_DISPATCHER: 'on', SVC_SMS_SCHEDULER_CRON: '0 0 1 1 *' } }))

  /** An owner of a new academy with an APPROVED sender number, and the headers of a token of theirs. */
  async function signedInOwner() {
    const tenant = await insertTenantAndSender(iso.owner)
    const user = await iso.owner
      .insertInto('users')
      .values({ tenantId: tenant.tenantId, userLoginId: `owner-${tenant.slug}`, passwordHash: 'x', name: 'Owner', role: 'OWNER', avatarSeed: 'seed', updatedAt: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow()
    const { access } = await issueTokenPair(
      app.current.tokenKeys,
      { userId: user.id, tenantId: tenant.tenantId, tenantSlug: tenant.slug, role: 'OWNER', sid: randomUUID() },
      { accessSeconds: 600, refreshSeconds: 1200 },
    )
    return { tenantId: tenant.tenantId, userId: user.id, headers: { authorization: `Bearer ${access.token}` } }
  }

  const monthStart = (monthsAgo: number) => {
    const date = new Date()
    return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - monthsAgo, 1))
  }

  /** The range of a month long past, and the month after it opened before the cutoff; returns its suffix. */
  async function pastRange(monthsAgo: number): Promise<string> {
    await sql`select svc_prepare_sms_partitions(0, ${monthStart(monthsAgo)})`.execute(iso.owner)
    await sql`select svc_prepare_sms_partitions(0, ${monthStart(monthsAgo - 1)})`.execute(iso.owner)
    return `p${monthStart(monthsAgo).toISOString().slice(0, 7).replace('-', '')}`
  }

  const sendOne = (headers: Record<string, string>) =>
    app.current.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      payload: { recipients: [{ phone: '010-6100-0001', name: 'Kim' }], title: 'Notice', content: 'Class moved to 5 pm' },
    })

  /** Whether `count` backends of the database wait for a lock while running a statement matching `pattern`. */
  async function waitingOnLocks(pattern: string, count: number): Promise<boolean> {
    const { rows } = await sql<{ waiting: number }>`
      select count(*)::int as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query ilike ${pattern}`.execute(iso.owner)
    return rows[0]!.waiting >= count
  }

  it('accepts a send and dispatches it while the detach waits for a reader', async () => {
    const { headers } = await signedInOwner()
    const suffix = await pastRange(16)

    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let reading!: () => void
    const read = new Promise<void>((resolve) => (reading = resolve))
    const reader = iso.owner.transaction().execute(async (trx) => {
      await sql`select count(*) from sms_messages`.execute(trx)
      reading()
      await released
    })
    await read
    let dropped: Awaited<ReturnType<typeof dropRangesPastRetention>> | undefined
    const dropping = dropRangesPastRetention(iso.owner, 400, true).then((result) => (dropped = result))
    try {
      await until(async () => {
        const { rows } = await sql<{ waiting: number }>`
          select count(*)::int as waiting from pg_stat_activity
          where datname = current_database() and query ilike '%detach partition%' and wait_event_type is not null`.execute(iso.owner)
        return rows[0]!.waiting > 0
      })

      const sent = await sendOne(headers)
      expect(sent.statusCode).toBe(201)
      await app.current.dispatcher.runOnce()
      const status = async () =>
        (await app.current.inject({ method: 'GET', url: `/v1/sms/history/${sent.json().id}`, headers })).json().status
      await until(async () => (await status()) === 'SENT')
      expect(dropped, 'the detach still waits for the reader').toBeUndefined()
    } finally {
      release()
      await reader
      await dropping
    }
    expect(dropped?.map((range) => range.suffix)).toContain(suffix)
  })

  // The drop's last step counts the month's staff messages, drops the detached tables, and only then takes the
  // counts off the history totals, in one transaction. A send of the same sender meanwhile neither waits nor fails,
  // and both totals stay exact. (Updating the totals first held the sender's counter row while the tables were
  // dropped; with foreign keys to users and tenants on the partitions, the DROP also needed locks a send holds, and
  // PostgreSQL cancelled the send: "deadlock detected" in the scale bench.)
  it('a send of a sender whose month is being forgotten goes through at once, and the totals stay exact', async () => {
    const owner = await signedInOwner()
    const suffix = await pastRange(20)
    const oldId = Number((await sql<{ start: string }>`select svc_sms_range_start(${monthStart(20)}::date) as start`.execute(iso.owner)).rows[0]!.start) + 1
    await sql`
      insert into sms_messages (tenant_id, id, sender_id, recipient_type, recipient_count, title, content, message_type,
        estimated_segments, unit_price, total_price, status, provider, created_at, updated_at)
      values (${owner.tenantId}, ${oldId}, ${owner.userId}, 'CUSTOM', 1, 'Old', 'Old news', 'SMS', 1, 20, 20, 'SENT', 'extsms',
        ${monthStart(20)}, ${monthStart(20)})`.execute(iso.owner)
    const total = async () =>
      (await app.current.inject({ method: 'GET', url: '/v1/sms/history', headers: owner.headers })).json().total as number
    expect(await total()).toBe(1)
    for (const parent of ['sms_messages', 'sms_recipients']) {
      await sql`alter table ${sql.id(parent)} detach partition ${sql.id(`${parent}_${suffix}`)}`.execute(iso.owner)
    }

    // A reader of the detached month holds the forget at its DROP; the send meanwhile must not wait for it.
    const reader = new pg.Client({ connectionString: iso.ownerUrl })
    await reader.connect()
    let forgotten: Promise<{ rows: Array<{ messages: number }> }> | undefined
    try {
      await reader.query('begin')
      await reader.query(`lock table sms_messages_${suffix} in access share mode`)
      forgotten = sql<{ messages: number }>`select svc_forget_sms_range(${suffix}) as messages`.execute(iso.owner)
      await until(() => waitingOnLocks('%svc_forget_sms_range%', 1))
      const sent = sendOne(owner.headers)
      const waited = await Promise.race([sent.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 3000))])
      expect(waited, 'the send waited for the forget').toBe(false)
      expect((await sent).statusCode).toBe(201)
      expect(await total()).toBe(2)
    } finally {
      await reader.query('commit')
      await reader.end()
    }
    expect((await forgotten!).rows).toEqual([{ messages: 1 }])
    expect(await total()).toBe(1)
    const { rows } = await sql<{ messages: number }>`
      select messages::int from sms_message_counts where tenant_id = ${owner.tenantId} and sender_id = ${owner.userId}`.execute(iso.owner)
    expect(rows).toEqual([{ messages: 1 }])
  })
})
