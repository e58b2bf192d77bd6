import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { issueTokenPair } from '../../lib/auth/tokens.js'
import { dropRangesPastRetention } from '../../db/repos/sms-retention.js'
import { until } from '../auth-fixtures.js'
import { insertTenantAndSender } from '../dispatch-fixtures.js'
import { buildTestApp, describePostgres } from '../helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../isolated-database.js'

// A month past retention is dropped while another transaction still reads the SMS tables (a history page, a report):
// the detach waits for it, and sends and dispatches meanwhile neither wait nor fail. A plain DETACH or DROP would
// queue for an ACCESS EXCLUSIVE lock behind that reader, and every send and dispatch would queue behind it.
describePostgres('dropping a month of SMS while sends and dispatches run', () => {
  let iso: IsolatedDatabase
  let app: FastifyInstance

  beforeAll(async () => {
    iso = await isolatedDatabase()
    app = await buildTestApp({ DATABASE_URL: iso.url, SVC_SMS_DISPATCHER: 'on', SVC_SMS_SCHEDULER_CRON: '0 0 1 1 *' })
  })
  afterAll(async () => {
    await app?.close()
    await iso?.drop()
  })

  it('accepts a send and dispatches it while the detach waits for a reader', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    const user = await iso.owner
      .insertInto('users')
      .values({ tenantId: tenant.tenantId, userLoginId: `owner-${tenant.slug}`, passwordHash: 'x', name: 'Owner', role: 'OWNER', avatarSeed: 'seed', updatedAt: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow()
    const { access } = await issueTokenPair(
      app.tokenKeys,
      { userId: user.id, tenantId: tenant.tenantId, tenantSlug: tenant.slug, role: 'OWNER', sid: randomUUID() },
      { accessSeconds: 600, refreshSeconds: 1200 },
    )
    const headers = { authorization: `Bearer ${access.token}` }
    // A month long past with a message in it, and the month after it opened before the cutoff.
    const monthStart = (monthsAgo: number) => {
      const date = new Date()
      return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - monthsAgo, 1))
    }
    await sql`select svc_prepare_sms_partitions(0, ${monthStart(16)})`.execute(iso.owner)
    await sql`select svc_prepare_sms_partitions(0, ${monthStart(15)})`.execute(iso.owner)
    const suffix = `p${monthStart(16).toISOString().slice(0, 7).replace('-', '')}`

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

      const sent = await app.inject({
        method: 'POST',
        url: '/v1/sms/send',
        headers: { ...headers, 'idempotency-key': randomUUID() },
        payload: { recipients: [{ phone: '010-6100-0001', name: 'Kim' }], title: 'Notice', content: 'Class moved to 5 pm' },
      })
      expect(sent.statusCode).toBe(201)
      await app.dispatcher.runOnce()
      const status = async () =>
        (await app.inject({ method: 'GET', url: `/v1/sms/history/${sent.json().id}`, headers })).json().status
      await until(async () => (await status()) === 'SENT')
      expect(dropped, 'the detach still waits for the reader').toBeUndefined()
    } finally {
      release()
      await reader
      await dropping
    }
    expect(dropped?.map((range) => range.suffix)).toContain(suffix)
  })
})
