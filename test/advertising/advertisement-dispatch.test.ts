import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { until } from '../support/auth-fixtures.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import { NO_USAGE } from '../audit/usage-fixtures.js'
import { listOptOut, recordConsents, setOptOutNumber } from './advertising-fixtures.js'
import { seoul, seoulDate } from './advertisement-send-fixtures.js'

describe('advertisements accepted by a send and dispatched by the mock provider', () => {
  // The dispatcher claims the due messages of every tenant: a database of its own keeps other files' messages away.
  let iso: IsolatedDatabase
  // The app's clock (acceptance and dispatcher alike); noon in Seoul unless a test moves it.
  const noon = seoul('2026-03-10T12:00:00')
  let now = noon

  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso?.drop()
  })
  const app = useTestApp(() => ({ env: { DATABASE_URL: iso.url, SVC_SMS_DISPATCHER: 'on' }, clock: () => new Date(now.getTime()) }))

  /** An academy of the isolated database with its opt-out number set and its numbers' consents, and its OWNER's headers. */
  async function isolatedAdvertiser() {
    const { tenantId, slug } = await insertTenantAndSender(iso.owner)
    const user = await iso.owner
      .insertInto('users')
      .values({ tenantId, userLoginId: `owner-${slug}`, passwordHash: 'x', name: 'Owner', role: 'OWNER', avatarSeed: 'seed', updatedAt: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow()
    const { access } = await issueTokenPair(
      app.current.tokenKeys,
      { userId: user.id, tenantId, tenantSlug: slug, role: 'OWNER', sid: randomUUID() },
      { accessSeconds: 600, refreshSeconds: 1200 },
    )
    const owner = { headers: { authorization: `Bearer ${access.token}` } }
    await setOptOutNumber(app.current, owner)
    await recordConsents({ id: tenantId }, ['010-6000-0001', '010-6000-0002', '010-6000-0003'], { db: iso.owner })
    return owner
  }

  function sendAdvertisement(owner: { headers: Record<string, string> }, extra: Record<string, unknown> = {}) {
    return app.current.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers: { ...owner.headers, 'idempotency-key': randomUUID() },
      payload: {
        recipients: [
          { phone: '010-6000-0001', name: 'Kim' },
          { phone: '010-6000-0002', name: 'Lee' },
          { phone: '010-6000-0003', name: 'Park' },
        ],
        title: 'Winter class',
        content: 'Winter class',
        purpose: 'ADVERTISEMENT',
        ...extra,
      },
    })
  }

  const detailOf = (owner: { headers: Record<string, string> }, id: number) =>
    app.current.inject({ method: 'GET', url: `/v1/sms/history/${id}`, headers: owner.headers }).then((response) => response.json())

  it('ends SENT with two successes, and the usage report counts 3 recipients, 1 opted out, 2 segments and their price', async () => {
    now = noon
    const owner = await isolatedAdvertiser()
    await listOptOut(app.current, owner, '010-6000-0002')
    const sent = await sendAdvertisement(owner)
    expect(sent.statusCode).toBe(201)
    const unitPrice = app.current.env.SVC_SMS_PRICE_SMS
    expect(sent.json()).toMatchObject({ messageType: 'SMS', unitPrice, recipientCount: 3, optedOutCount: 1, estimatedSegments: 2 })

    await until(async () => (await detailOf(owner, sent.json().id)).status === 'SENT', 10_000)
    const done = await detailOf(owner, sent.json().id)
    expect(done).toMatchObject({ status: 'SENT', successCount: 2, failCount: 0, optedOutCount: 1, estimatedSegments: 2, totalPrice: 2 * unitPrice })
    expect(done.recipients.map((recipient: { name: string; deliveryStatus: string }) => [recipient.name, recipient.deliveryStatus])).toEqual([
      ['Kim', 'DELIVERED'],
      ['Lee', 'OPTED_OUT'],
      ['Park', 'DELIVERED'],
    ])

    // Usage days come from the database's clock (created_at), not the app's: today in Seoul, a day either side.
    const usage = await app.current.inject({ method: 'GET', url: `/v1/sms/usage?from=${seoulDate(-1)}&to=${seoulDate(1)}`, headers: owner.headers })
    expect(usage.statusCode).toBe(200)
    expect(usage.json().totals).toEqual({
      ...NO_USAGE,
      messages: 1,
      recipients: 3,
      sms: 1,
      segments: 2,
      estimatedCost: 2 * unitPrice,
      delivered: 2,
      optedOut: 1,
    })
  })

  it('holds an advertisement that falls due at 21:00:00 until 08:00:00', async () => {
    now = noon
    const owner = await isolatedAdvertiser()
    // Accepted for a daytime hour ahead of the real clock, then made due now, as the night begins on the app's clock.
    const sent = await sendAdvertisement(owner, { scheduledAt: seoul(`${seoulDate(2)}T10:00:00`).toISOString() })
    expect(sent.statusCode).toBe(201)
    now = seoul('2026-03-10T21:00:00')
    await sql`update sms_messages set scheduled_at = now() - interval '1 minute', next_attempt_at = now() - interval '1 minute'
      where id = ${sent.json().id}`.execute(iso.owner)

    expect(await app.current.dispatcher.runOnce()).toBe(0)
    expect(await detailOf(owner, sent.json().id)).toMatchObject({ status: 'PENDING', successCount: 0 })

    now = seoul('2026-03-11T07:59:59')
    expect(await app.current.dispatcher.runOnce()).toBe(0)
    expect(await detailOf(owner, sent.json().id)).toMatchObject({ status: 'PENDING' })

    now = seoul('2026-03-11T08:00:00')
    await app.current.dispatcher.runOnce()
    await until(async () => (await detailOf(owner, sent.json().id)).status === 'SENT', 10_000)
    expect(await detailOf(owner, sent.json().id)).toMatchObject({ status: 'SENT', successCount: 3 })
  })
})
