import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { enqueueSystemSms, systemSmsSettings } from '../../lib/dispatch/system-messages.js'
import { applyDeliveryReports } from '../../lib/dispatch/delivery/apply-reports.js'
import { expectProblem } from '../sms/sms-fixtures.js'
import { owner as ownerDb, type TenantRow } from '../support/fixtures.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { buildTestApp, itPostgres, useTestApp } from '../support/helper.js'
import { isolatedDatabase } from '../support/isolated-database.js'
import { insertMessageRow, minutesFromNow, phones, recipients, send } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'
import { UsageReportSchema } from '../../routes/v1/sms/usage.schemas.js'
import { NO_USAGE } from './usage-fixtures.js'

const NONE = NO_USAGE
type Figures = typeof NONE
const figures = (some: Partial<Figures>): Figures => ({ ...NONE, ...some })

/** The local date (YYYY-MM-DD) of `at` in `timeZone`. */
const localDate = (timeZone: string, at = new Date()) => new Intl.DateTimeFormat('en-CA', { timeZone }).format(at)
const shiftDate = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

// More than 90 bytes: an LMS.
const LONG_CONTENT = 'This notice is long enough that it cannot go out as a short message and is priced as an LMS instead.'

describe('GET /v1/sms/usage', () => {
  const app = useTestApp()
  const usage = (who: Actor | undefined, query: string, service: FastifyInstance = app.current) =>
    service.inject({ method: 'GET', url: `/v1/sms/usage${query}`, headers: who?.headers ?? {} })
  /** Today's local date in Seoul, a day either side: whatever the clock does during the test, today is inside. */
  const aroundToday = () => {
    const today = localDate('Asia/Seoul')
    return `?from=${shiftDate(today, -1)}&to=${shiftDate(today, 1)}`
  }
  const deleteMessagesOf = async (tenant: TenantRow) => {
    await ownerDb().deleteFrom('smsRecipients').where('tenantId', '=', tenant.id).execute()
    await ownerDb().deleteFrom('smsMessages').where('tenantId', '=', tenant.id).execute()
  }

  it('counts sends on the local day they were accepted, for an OWNER and a MANAGER alike', async () => {
    const { owner, manager } = await academy(app.current)
    const before = localDate('Asia/Seoul')
    expect((await send(app.current, manager, { recipients: recipients(3), title: 'T', content: 'Hi {name}' })).statusCode).toBe(201)
    expect((await send(app.current, owner, { recipients: recipients(2), title: 'T', content: LONG_CONTENT })).statusCode).toBe(201)

    const query = `?from=${shiftDate(before, -1)}&to=${shiftDate(before, 1)}`
    const response = await usage(manager, query)
    expect(response.statusCode).toBe(200)
    const body = response.json()
    const counted = figures({ messages: 2, recipients: 5, sms: 1, lms: 1, segments: 5, estimatedCost: 3 * 20 + 2 * 50 })
    expect(body).toEqual({
      timeZone: 'Asia/Seoul',
      from: shiftDate(before, -1),
      to: shiftDate(before, 1),
      totals: counted,
      days: [{ date: expect.any(String), ...counted }],
    })
    expect([before, localDate('Asia/Seoul')]).toContain(body.days[0].date)
    expect((await usage(owner, query)).json()).toEqual(body)
    // PostgreSQL writes totals and days as JSON text: the same compact text, keys and order as the schema's.
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.body).toBe(JSON.stringify(body))
    expect(Object.keys(body)).toEqual(['timeZone', 'from', 'to', 'totals', 'days'])
    expect(Object.keys(body.totals)).toEqual(Object.keys(NONE))
    expect(Object.keys(body.days[0])).toEqual(['date', ...Object.keys(NONE)])
    expect(Object.keys(NONE)).toEqual(Object.keys(UsageReportSchema.properties.totals.properties))
  })

  it('puts a message accepted at 23:30 local on that day and one at 00:30 on the next; a day runs from local midnight to local midnight', async () => {
    const { owner } = await academy(app.current)
    // Asia/Seoul is UTC+9: 2026-03-10T15:00Z is midnight between 10 and 11 March.
    const accepted = [
      ['2026-03-10T14:30:00Z', 1],
      ['2026-03-10T14:59:59.999Z', 2],
      ['2026-03-10T15:00:00Z', 3],
      ['2026-03-10T15:30:00Z', 4],
    ] as const
    for (const [at, count] of accepted) await insertMessageRow(owner, { createdAt: new Date(at), recipientPhones: phones(count) })
    const tenth = figures({ messages: 2, recipients: 3, sms: 2, segments: 3, estimatedCost: 60 })
    const eleventh = figures({ messages: 2, recipients: 7, sms: 2, segments: 7, estimatedCost: 140 })

    const both = (await usage(owner, '?from=2026-03-10&to=2026-03-11')).json()
    expect(both.days).toEqual([
      { date: '2026-03-10', ...tenth },
      { date: '2026-03-11', ...eleventh },
    ])
    expect(both.totals).toEqual(figures({ messages: 4, recipients: 10, sms: 4, segments: 10, estimatedCost: 200 }))
    expect((await usage(owner, '?from=2026-03-10&to=2026-03-10')).json()).toMatchObject({ totals: tenth, days: [{ date: '2026-03-10' }] })
    expect((await usage(owner, '?from=2026-03-11&to=2026-03-11')).json()).toMatchObject({ totals: eleventh, days: [{ date: '2026-03-11' }] })
    expect((await usage(owner, '?from=2026-03-09&to=2026-03-09')).json()).toMatchObject({ totals: NONE, days: [] })

    // In UTC all four were accepted on 10 March.
    const utc = await buildTestApp({ SVC_TIME_ZONE: 'UTC' })
    try {
      const inUtc = (await usage(owner, '?from=2026-03-10&to=2026-03-11', utc)).json()
      expect(inUtc).toMatchObject({ timeZone: 'UTC', days: [{ date: '2026-03-10', ...both.totals }] })
      expect(inUtc.days).toHaveLength(1)
    } finally {
      await utc.close()
    }
  })

  it('leaves a cancelled scheduled message out: cancelling takes back what it counted, and its day goes', async () => {
    const { owner } = await academy(app.current)
    const scheduled = await send(app.current, owner, { recipients: recipients(4), title: 'T', content: 'Later', scheduledAt: minutesFromNow(60) })
    expect((await usage(owner, aroundToday())).json().totals).toMatchObject({ messages: 1, recipients: 4 })

    const cancel = await app.current.inject({ method: 'POST', url: `/v1/sms/history/${scheduled.json().id}/cancel`, headers: owner.headers })
    expect(cancel.statusCode).toBe(200)
    expect((await usage(owner, aroundToday())).json()).toMatchObject({ totals: NONE, days: [] })
    await app.current.rollUpSmsUsage()
    expect((await usage(owner, aroundToday())).json()).toMatchObject({ totals: NONE, days: [] })

    expect((await send(app.current, owner, { recipients: recipients(1), title: 'T', content: 'Now' })).statusCode).toBe(201)
    expect((await usage(owner, aroundToday())).json().totals).toEqual(figures({ messages: 1, recipients: 1, sms: 1, segments: 1, estimatedCost: 20 }))
  })

  it('counts delivery results on the day the message was accepted, however much later they arrive', async () => {
    const { tenant, owner } = await academy(app.current)
    // Accepted at 23:50 on 5 January in Seoul; its results come in today.
    const smsId = await insertMessageRow(owner, { createdAt: new Date('2026-01-05T14:50:00Z'), recipientPhones: phones(3) })
    const report = (successCount: number, failCount: number, status: 'DISPATCHED' | 'PARTIAL') =>
      withTenant(app.current.db, tenant.id, (trx) =>
        trx.updateTable('smsMessages').set({ status, successCount, failCount }).where('id', '=', smsId).execute(),
      )
    await report(1, 0, 'DISPATCHED')
    await report(2, 1, 'PARTIAL')

    const body = (await usage(owner, '?from=2026-01-01&to=2026-01-31')).json()
    expect(body.days).toEqual([
      { date: '2026-01-05', ...figures({ messages: 1, recipients: 3, sms: 1, segments: 3, estimatedCost: 60, delivered: 2, failed: 1 }) },
    ])
    expect((await usage(owner, aroundToday())).json().days).toEqual([])
  })

  it('counts AlimTalk recipients delivered over KakaoTalk in alimtalk, by the SMS fallback in fallbacks, and the re-priced cost', async () => {
    const { tenant, owner } = await academy(app.current)
    // Accepted on 5 January in Seoul: three recipients at the AlimTalk price, handed to the provider.
    const smsId = await insertMessageRow(owner, { createdAt: new Date('2026-01-05T03:00:00Z'), recipientPhones: phones(3) })
    await ownerDb()
      .updateTable('smsMessages')
      .set({ channel: 'ALIMTALK', fallback: 'SMS', unitPrice: 13, totalPrice: 39, status: 'DISPATCHED' })
      .where('id', '=', smsId)
      .execute()
    await sql`
      update sms_recipients set delivery_status = 'DISPATCHED', provider_message_id = 'M-' || recipient_index
      where sms_id = ${smsId}`.execute(ownerDb())
    const reportOf = (index: number, type: string, statusCode: string) => ({
      ok: true as const,
      report: { tenantSlug: tenant.slug, smsId, recipientIndex: index, messageId: `M-${index}`, groupId: null, statusCode, statusMessage: null, dateProcessed: null, type },
    })
    const applied = await applyDeliveryReports(app.current.db, [reportOf(0, 'ATA', '4000'), reportOf(1, 'SMS', '4000'), reportOf(2, 'ATA', '3104')], { sms: 20, lms: 50 })
    expect(applied).toEqual({ processed: 3, ignored: 0 })

    const expected = [
      {
        date: '2026-01-05',
        ...figures({ messages: 1, recipients: 3, sms: 1, segments: 3, estimatedCost: 39 + (20 - 13), delivered: 2, failed: 1, alimtalk: 1, fallbacks: 1 }),
      },
    ]
    expect((await usage(owner, '?from=2026-01-01&to=2026-01-31')).json().days).toEqual(expected)
    await app.current.rollUpSmsUsage()
    expect((await usage(owner, '?from=2026-01-01&to=2026-01-31')).json().days).toEqual(expected)
  })

  it('counts a one-time-code SMS in verificationCodes, and in the figures it is charged in', async () => {
    const { tenant, owner } = await academy(app.current)
    await withTenant(app.current.db, tenant.id, (trx) =>
      enqueueSystemSms(trx, systemSmsSettings(app.current.env), {
        tenantId: tenant.id,
        to: '010-2222-3333',
        text: 'Your code is 123456',
        kind: 'VERIFICATION_CODE',
      }),
    )
    expect((await send(app.current, owner, { recipients: recipients(2), title: 'T', content: 'Hi' })).statusCode).toBe(201)
    expect((await usage(owner, aroundToday())).json().totals).toEqual(
      figures({ messages: 2, recipients: 3, sms: 2, segments: 3, estimatedCost: 60, verificationCodes: 1 }),
    )
  })

  it('answers the same whether the changes are rolled up or still pending, and after the messages are deleted', async () => {
    const { tenant, owner } = await academy(app.current)
    expect((await send(app.current, owner, { recipients: recipients(2), title: 'T', content: 'One' })).statusCode).toBe(201)
    await app.current.rollUpSmsUsage()
    // Not rolled up yet: the report must read the pending change.
    expect((await send(app.current, owner, { recipients: recipients(3), title: 'T', content: LONG_CONTENT })).statusCode).toBe(201)
    const pending = (await usage(owner, aroundToday())).json()
    expect(pending.totals).toEqual(figures({ messages: 2, recipients: 5, sms: 1, lms: 1, segments: 5, estimatedCost: 190 }))

    await app.current.rollUpSmsUsage()
    const changesLeft = await ownerDb().selectFrom('smsUsageChanges').select('id').where('tenantId', '=', tenant.id).execute()
    expect(changesLeft).toEqual([])
    expect((await usage(owner, aroundToday())).json()).toEqual(pending)

    // Retention removes messages and their recipients; usage stays.
    await send(app.current, owner, { recipients: recipients(1), title: 'T', content: 'Three' })
    const beforeDeletion = (await usage(owner, aroundToday())).json()
    expect(beforeDeletion.totals.messages).toBe(3)
    await deleteMessagesOf(tenant)
    expect((await usage(owner, aroundToday())).json()).toEqual(beforeDeletion)
    await app.current.rollUpSmsUsage()
    expect((await usage(owner, aroundToday())).json()).toEqual(beforeDeletion)
  })

  it('answers right in an app whose SVC_TIME_ZONE differs, before and after its roll-up rebuilds the days for its zone, and back', async () => {
    const { owner } = await academy(app.current)
    // 23:30 on 10 March in Seoul is 14:30 UTC; 00:30 on the 11th is 15:30 UTC, still the 10th there.
    await insertMessageRow(owner, { createdAt: new Date('2026-03-10T14:30:00Z'), recipientPhones: phones(1) })
    await insertMessageRow(owner, { createdAt: new Date('2026-03-10T15:30:00Z'), recipientPhones: phones(2) })
    const counted = (recipients: number, messages = 1) =>
      figures({ messages, recipients, sms: messages, segments: recipients, estimatedCost: 20 * recipients })
    const inSeoul = [
      { date: '2026-03-10', ...counted(1) },
      { date: '2026-03-11', ...counted(2) },
    ]
    const inUtc = [{ date: '2026-03-10', ...counted(3, 2) }]
    const query = '?from=2026-03-09&to=2026-03-12'
    await app.current.rollUpSmsUsage()

    const utc = await buildTestApp({ SVC_TIME_ZONE: 'UTC' })
    try {
      expect((await usage(owner, query, utc)).json()).toMatchObject({ timeZone: 'UTC', days: inUtc })
      await utc.rollUpSmsUsage()
      expect((await usage(owner, query, utc)).json()).toMatchObject({ timeZone: 'UTC', days: inUtc })
      expect((await usage(owner, query)).json()).toMatchObject({ timeZone: 'Asia/Seoul', days: inSeoul })
      await app.current.rollUpSmsUsage()
      expect((await usage(owner, query)).json()).toMatchObject({ timeZone: 'Asia/Seoul', days: inSeoul })
      expect((await usage(owner, query, utc)).json()).toMatchObject({ timeZone: 'UTC', days: inUtc })
    } finally {
      await utc.close()
    }
  })

  itPostgres("rolls up into the local days of the instance's SVC_TIME_ZONE", async () => {
    // A database of its own: only this app's roll-ups (and its minute job, in the same zone) run there.
    const iso = await isolatedDatabase()
    const newYork = await buildTestApp({ DATABASE_URL: iso.url, DATABASE_MIGRATION_URL: iso.ownerUrl, SVC_TIME_ZONE: 'America/New_York' })
    try {
      const tenant = await insertTenantAndSender(iso.owner)
      // A message's delta, as the triggers journal it: 03:00 UTC on 10 March is 23:00 on the 9th in New York.
      await iso.owner.insertInto('smsUsageChanges').values({ tenantId: tenant.tenantId, bucket: '2026-03-10T03:00:00Z', messages: 1 }).execute()
      await newYork.rollUpSmsUsage()
      const days = await iso.owner
        .selectFrom('smsUsageDays')
        .select(['timeZone', sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'), 'messages'])
        .where('tenantId', '=', tenant.tenantId)
        .execute()
      expect(days).toEqual([{ timeZone: 'America/New_York', day: '2026-03-09', messages: 1 }])
      expect(await iso.owner.selectFrom('smsUsageZones').select('timeZone').execute()).toEqual([{ timeZone: 'America/New_York' }])
    } finally {
      await newYork.close()
      await iso.drop()
    }
  })

  it("never includes another tenant's usage", async () => {
    const mine = await academy(app.current)
    const theirs = await academy(app.current)
    await send(app.current, mine.owner, { recipients: recipients(1), title: 'T', content: 'Mine' })
    await send(app.current, theirs.owner, { recipients: recipients(6), title: 'T', content: 'Theirs' })
    await insertMessageRow(theirs.owner, { createdAt: new Date('2026-03-10T03:00:00Z') })

    expect((await usage(mine.owner, aroundToday())).json().totals).toMatchObject({ messages: 1, recipients: 1 })
    expect((await usage(mine.manager, '?from=2026-03-10&to=2026-03-10')).json().days).toEqual([])
    expect((await usage(theirs.manager, aroundToday())).json().totals).toMatchObject({ messages: 1, recipients: 6 })
  })

  it('refuses an INSTRUCTOR and a STUDENT (AUTH_008) and a caller without a token (AUTH_002)', async () => {
    const { instructor, student } = await academy(app.current)
    expectProblem(await usage(instructor, aroundToday()), 403, 'AUTH_008')
    expectProblem(await usage(student, aroundToday()), 403, 'AUTH_008')
    expectProblem(await usage(undefined, aroundToday()), 401, 'AUTH_002')
  })

  it.each([
    ['to before from', '?from=2026-03-10&to=2026-03-09', 'querystring.to'],
    ['367 days', '?from=2025-01-01&to=2026-01-02', 'querystring.to'],
    ['a date that does not exist', '?from=2026-02-30&to=2026-03-01', 'querystring.from'],
    ['no from', '?to=2026-03-01', 'querystring.from'],
    ['no to', '?from=2026-03-01', 'querystring.to'],
    ['a date with a time', '?from=2026-03-01T00:00:00Z&to=2026-03-02', 'querystring.from'],
    ['year 0', '?from=0000-03-01&to=0000-03-02', 'querystring.from'],
    ['digits only', '?from=20260301&to=20260302', 'querystring.from'],
  ])('answers 400 VALIDATION_FAILED naming the field for %s', async (_case, query, field) => {
    const { owner } = await academy(app.current)
    const body = expectProblem(await usage(owner, query), 400, 'VALIDATION_FAILED')
    expect(body.errors).toEqual([expect.objectContaining({ field })])
  })

  it('takes a range of up to 366 days, both ends included, and a single day', async () => {
    const { owner } = await academy(app.current)
    await insertMessageRow(owner, { createdAt: new Date('2024-12-31T05:00:00Z') })
    for (const query of ['?from=2024-01-01&to=2024-12-31', '?from=2024-12-31&to=2024-12-31', '?from=2024-12-31&to=2025-12-31']) {
      const response = await usage(owner, query)
      expect(response.statusCode, query).toBe(200)
      expect(response.json().days, query).toEqual([{ date: '2024-12-31', ...figures({ messages: 1, recipients: 1, sms: 1, segments: 1, estimatedCost: 20 }) }])
    }
  })
})
