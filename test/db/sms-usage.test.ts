import { sql, type Kysely } from 'kysely'
import { Migrator } from 'kysely/migration'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../db/database.js'
import { migrateToLatest } from '../../db/migrate.js'
import { migrations } from '../../db/migrations/index.js'
import { ROLL_UP_LIMITS, rollUpSmsUsage, usageReportJson } from '../../db/repos/audit/sms-usage.js'
import type { DB, SmsKind, SmsStatus } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { until } from '../support/auth-fixtures.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { itConcurrent, itPostgres } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import { NO_USAGE } from '../audit/usage-fixtures.js'

type Tenant = Awaited<ReturnType<typeof insertTenantAndSender>>

/** A message as a test chooses it; everything else as a send leaves it. */
interface MessageSpec {
  createdAt: string
  recipients?: number
  type?: 'SMS' | 'LMS'
  kind?: SmsKind
  status?: SmsStatus
  successCount?: number
  failCount?: number
}

const SEOUL = 'Asia/Seoul'
const PRICE = { SMS: 20, LMS: 50 }
const NONE = NO_USAGE
type UsageFigures = typeof NONE
type UsageDay = UsageFigures & { date: string }
const figures = (some: Partial<UsageFigures>): UsageFigures => ({ ...NONE, ...some })

/** A reproducible stream of numbers in [0, 1) (mulberry32): a failing random case can be run again from its seed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

/** Messages in one insert statement (one firing of the statement trigger), through `db`; returns their ids. */
async function insertMessages(db: Kysely<DB>, tenant: Tenant, specs: MessageSpec[]): Promise<number[]> {
  const rows = await db
    .insertInto('smsMessages')
    .values(
      specs.map((spec) => {
        const recipients = spec.recipients ?? 1
        const type = spec.type ?? 'SMS'
        const kind = spec.kind ?? 'STAFF'
        return {
          tenantId: tenant.tenantId,
          kind,
          senderId: kind === 'STAFF' ? tenant.senderId : null,
          senderNumber: null,
          recipientType: 'CUSTOM',
          recipientCount: recipients,
          title: 'Usage',
          content: 'Hello',
          messageType: type,
          estimatedSegments: recipients,
          unitPrice: PRICE[type],
          totalPrice: PRICE[type] * recipients,
          status: spec.status ?? 'PENDING',
          successCount: spec.successCount ?? 0,
          failCount: spec.failCount ?? 0,
          provider: 'mock',
          // Never due: nothing here is meant to be sent.
          nextAttemptAt: new Date(Date.now() + 365 * 86_400_000),
          createdAt: new Date(spec.createdAt),
          updatedAt: new Date(),
        }
      }),
    )
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}

const SELECTED_FIGURES = [
  'messages',
  'recipients',
  'sms',
  'lms',
  'segments',
  'estimatedCost',
  'delivered',
  'failed',
  'optedOut',
  'verificationCodes',
  'alimtalk',
  'fallbacks',
  'noConsent',
  'consentNotices',
] as const

describe('SMS usage: the journal, its triggers and the roll-up', () => {
  let iso: IsolatedDatabase
  let runtime: Database
  // A database of its own: no test app runs the minute roll-up on it, so the journal holds still between statements.
  beforeAll(async () => {
    iso = await isolatedDatabase()
    runtime = iso.open(4)
  })
  afterAll(async () => {
    await runtime?.close()
    await iso?.drop()
  })

  const journal = async (tenant: Tenant) =>
    (
      await iso.owner
        .selectFrom('smsUsageChanges')
        .select(['id', 'bucket', ...SELECTED_FIGURES])
        .where('tenantId', '=', tenant.tenantId)
        .orderBy('id')
        .execute()
    ).map(({ id, bucket, ...rest }) => ({ id, bucket: bucket.toISOString(), ...rest }))
  const totals = async (tenant: Tenant) =>
    (
      await iso.owner
        .selectFrom('smsUsage')
        .select(['bucket', ...SELECTED_FIGURES])
        .where('tenantId', '=', tenant.tenantId)
        .orderBy('bucket')
        .execute()
    ).map(({ bucket, ...rest }) => ({ bucket: bucket.toISOString(), ...rest }))
  const days = async (tenant: Tenant) =>
    iso.owner
      .selectFrom('smsUsageDays')
      .select(['timeZone', sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'), ...SELECTED_FIGURES])
      .where('tenantId', '=', tenant.tenantId)
      .orderBy('timeZone')
      .orderBy('day')
      .execute()
  const zones = async () => (await iso.owner.selectFrom('smsUsageZones').select(['timeZone', 'readyAt']).execute())
  const report = async (tenant: Tenant, from: string, to: string, timeZone = SEOUL): Promise<UsageDay[]> => {
    const json = await withTenant(runtime.db, tenant.tenantId, (trx) => usageReportJson(trx, tenant.tenantId, { from, to, timeZone }))
    return JSON.parse(json.days) as UsageDay[]
  }
  const asRuntime = <T>(tenant: Tenant, fn: (trx: Kysely<DB>) => Promise<T>) => withTenant(runtime.db, tenant.tenantId, fn)
  const setCounts = (tenant: Tenant, id: number, set: { status?: SmsStatus; successCount?: number; failCount?: number }) =>
    asRuntime(tenant, (trx) => trx.updateTable('smsMessages').set(set).where('id', '=', id).execute())

  it('journals one insert statement as one delta per 15-minute bucket, and nothing for a message stored CANCELLED', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    // As the runtime role, under RLS, as a send inserts.
    await asRuntime(tenant, (trx) =>
      insertMessages(trx, tenant, [
        { createdAt: '2026-03-10T14:30:00Z', recipients: 2, successCount: 1, failCount: 1 },
        { createdAt: '2026-03-10T14:44:59.999Z', type: 'LMS' },
        { createdAt: '2026-03-10T14:45:00Z', kind: 'VERIFICATION_CODE' },
        { createdAt: '2026-03-10T14:50:00Z', recipients: 5, status: 'CANCELLED' },
      ]),
    )
    expect((await journal(tenant)).map(({ id: _id, ...delta }) => delta)).toEqual([
      {
        bucket: '2026-03-10T14:30:00.000Z',
        ...figures({ messages: 2, recipients: 3, sms: 1, lms: 1, segments: 3, estimatedCost: 90, delivered: 1, failed: 1 }),
      },
      { bucket: '2026-03-10T14:45:00.000Z', ...figures({ messages: 1, recipients: 1, sms: 1, segments: 1, estimatedCost: 20, verificationCodes: 1 }) },
    ])
  })

  it('journals delivery results in the bucket of acceptance, a cancel as the message taken back and an un-cancel as it put back; other moves journal nothing', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    const [sent, held] = await insertMessages(iso.owner, tenant, [
      { createdAt: '2026-04-01T00:07:00Z', recipients: 3 },
      { createdAt: '2026-04-01T00:20:00Z', recipients: 2, type: 'LMS' },
    ])
    const inserted = (await journal(tenant)).length

    await setCounts(tenant, sent!, { status: 'DISPATCHED' })
    await setCounts(tenant, sent!, { successCount: 1 })
    await setCounts(tenant, sent!, { status: 'PARTIAL', successCount: 2, failCount: 1 })
    await setCounts(tenant, held!, { status: 'CANCELLED' })
    await setCounts(tenant, held!, { status: 'PENDING' })
    await setCounts(tenant, held!, { status: 'CANCELLED' })

    const lms = { messages: 1, recipients: 2, lms: 1, segments: 2, estimatedCost: 100 }
    const negative = (some: Partial<UsageFigures>) =>
      figures(Object.fromEntries(Object.entries(some).map(([name, value]) => [name, -value])))
    expect((await journal(tenant)).slice(inserted).map(({ id: _id, ...delta }) => delta)).toEqual([
      { bucket: '2026-04-01T00:00:00.000Z', ...figures({ delivered: 1 }) },
      { bucket: '2026-04-01T00:00:00.000Z', ...figures({ delivered: 1, failed: 1 }) },
      { bucket: '2026-04-01T00:15:00.000Z', ...negative(lms) },
      { bucket: '2026-04-01T00:15:00.000Z', ...figures(lms) },
      { bucket: '2026-04-01T00:15:00.000Z', ...negative(lms) },
    ])
    // 00:07 UTC is 09:07 in Seoul: one local day, the cancelled message gone from it.
    expect(await report(tenant, '2026-04-01', '2026-04-01')).toEqual([
      { date: '2026-04-01', ...figures({ messages: 1, recipients: 3, sms: 1, segments: 3, estimatedCost: 60, delivered: 2, failed: 1 }) },
    ])
  })

  it('rolls the journal up into per-bucket and per-local-day totals, adding to the totals already there, and no report changes', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    await insertMessages(iso.owner, tenant, [
      { createdAt: '2026-05-02T01:00:00Z', recipients: 2 },
      { createdAt: '2026-05-02T01:20:00Z' },
    ])
    await insertMessages(iso.owner, tenant, [{ createdAt: '2026-05-02T01:05:00Z', type: 'LMS' }])
    const before = await report(tenant, '2026-05-02', '2026-05-02')
    expect(before).toEqual([
      { date: '2026-05-02', ...figures({ messages: 3, recipients: 4, sms: 2, lms: 1, segments: 4, estimatedCost: 110 }) },
    ])

    expect(await rollUpSmsUsage(runtime.db, SEOUL)).toBeGreaterThanOrEqual(2)
    expect(await journal(tenant)).toEqual([])
    expect(await totals(tenant)).toEqual([
      { bucket: '2026-05-02T01:00:00.000Z', ...figures({ messages: 2, recipients: 3, sms: 1, lms: 1, segments: 3, estimatedCost: 90 }) },
      { bucket: '2026-05-02T01:15:00.000Z', ...figures({ messages: 1, recipients: 1, sms: 1, segments: 1, estimatedCost: 20 }) },
    ])
    expect(await days(tenant)).toEqual([
      { timeZone: SEOUL, day: '2026-05-02', ...figures({ messages: 3, recipients: 4, sms: 2, lms: 1, segments: 4, estimatedCost: 110 }) },
    ])
    expect(await report(tenant, '2026-05-02', '2026-05-02')).toEqual(before)

    await insertMessages(iso.owner, tenant, [{ createdAt: '2026-05-02T01:10:00Z', recipients: 4 }])
    const pending = await report(tenant, '2026-05-02', '2026-05-02')
    expect(pending[0]).toMatchObject({ messages: 4, recipients: 8 })
    expect(await rollUpSmsUsage(runtime.db, SEOUL)).toBe(1)
    expect((await totals(tenant))[0]).toMatchObject({ messages: 3, recipients: 7, sms: 2, segments: 7, estimatedCost: 170 })
    expect(await days(tenant)).toEqual([{ timeZone: SEOUL, day: '2026-05-02', ...figures({ messages: 4, recipients: 8, sms: 3, lms: 1, segments: 8, estimatedCost: 190 }) }])
    expect(await report(tenant, '2026-05-02', '2026-05-02')).toEqual(pending)
    expect(await rollUpSmsUsage(runtime.db, SEOUL)).toBe(0)
  })

  it('moves a backlog a batch per statement, at most so many batches a run, every report unchanged meanwhile', async () => {
    await rollUpSmsUsage(runtime.db, SEOUL)
    const tenant = await insertTenantAndSender(iso.owner)
    for (const minute of ['00', '15', '30', '45']) {
      await insertMessages(iso.owner, tenant, [{ createdAt: `2026-07-04T03:${minute}:00Z` }])
    }
    await insertMessages(iso.owner, tenant, [{ createdAt: '2026-07-04T04:00:00Z', recipients: 3 }])
    const before = await report(tenant, '2026-07-04', '2026-07-04')
    expect(await journal(tenant)).toHaveLength(5)

    expect(await rollUpSmsUsage(runtime.db, SEOUL, { batch: 2, batches: 2 })).toBe(4)
    expect(await journal(tenant)).toHaveLength(1)
    expect(await report(tenant, '2026-07-04', '2026-07-04')).toEqual(before)
    expect(await rollUpSmsUsage(runtime.db, SEOUL, { batch: 2, batches: 2 })).toBe(1)
    expect(await journal(tenant)).toEqual([])
    expect(await report(tenant, '2026-07-04', '2026-07-04')).toEqual(before)
    expect(await days(tenant)).toEqual([
      { timeZone: SEOUL, day: '2026-07-04', ...figures({ messages: 5, recipients: 7, sms: 5, segments: 7, estimatedCost: 140 }) },
    ])
  })

  it('keeps usage unchanged when messages and their recipients are deleted, rolled up or still pending', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    const [rolled] = await insertMessages(iso.owner, tenant, [{ createdAt: '2026-06-03T02:00:00Z', recipients: 2 }])
    await rollUpSmsUsage(runtime.db, SEOUL)
    const [pending] = await insertMessages(iso.owner, tenant, [{ createdAt: '2026-06-03T02:30:00Z', recipients: 3, type: 'LMS' }])
    await setCounts(tenant, pending!, { status: 'FAILED', failCount: 3 })
    for (const smsId of [rolled!, pending!]) {
      await iso.owner
        .insertInto('smsRecipients')
        .values({ tenantId: tenant.tenantId, smsId, recipientIndex: 0, phone: '01012345678', updatedAt: new Date() })
        .execute()
    }
    const kept = {
      journal: await journal(tenant),
      totals: await totals(tenant),
      days: await days(tenant),
      report: await report(tenant, '2026-06-03', '2026-06-03'),
    }
    expect(kept.report).toEqual([
      { date: '2026-06-03', ...figures({ messages: 2, recipients: 5, sms: 1, lms: 1, segments: 5, estimatedCost: 190, failed: 3 }) },
    ])

    // What retention does: the recipients, then the messages.
    await iso.owner.deleteFrom('smsRecipients').where('tenantId', '=', tenant.tenantId).execute()
    await iso.owner.deleteFrom('smsMessages').where('tenantId', '=', tenant.tenantId).execute()

    expect({
      journal: await journal(tenant),
      totals: await totals(tenant),
      days: await days(tenant),
      report: await report(tenant, '2026-06-03', '2026-06-03'),
    }).toEqual(kept)
    await rollUpSmsUsage(runtime.db, SEOUL)
    expect(await report(tenant, '2026-06-03', '2026-06-03')).toEqual(kept.report)
    expect(await days(tenant)).toEqual([{ timeZone: SEOUL, day: '2026-06-03', ...figures({ messages: 2, recipients: 5, sms: 1, lms: 1, segments: 5, estimatedCost: 190, failed: 3 }) }])
  })

  it('reads the local days once a roll-up built them for the zone, and the 15-minute buckets for any other zone', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    await insertMessages(iso.owner, tenant, [{ createdAt: '2026-10-07T03:00:00Z', recipients: 2 }])
    await rollUpSmsUsage(runtime.db, SEOUL)
    // 03:00 UTC is noon in Seoul: the same date in both zones.
    const counted = [{ date: '2026-10-07', ...figures({ messages: 1, recipients: 2, sms: 1, segments: 2, estimatedCost: 40 }) }]
    expect(await report(tenant, '2026-10-07', '2026-10-07', SEOUL)).toEqual(counted)
    expect(await report(tenant, '2026-10-07', '2026-10-07', 'UTC')).toEqual(counted)

    // As the owner, the day's total altered: only the Seoul report, which reads the days, shows it.
    const setDay = (recipients: number) =>
      iso.owner.updateTable('smsUsageDays').set({ recipients }).where('tenantId', '=', tenant.tenantId).execute()
    const setBucket = (recipients: number) =>
      iso.owner.updateTable('smsUsage').set({ recipients }).where('tenantId', '=', tenant.tenantId).execute()
    await setDay(1000)
    expect(await report(tenant, '2026-10-07', '2026-10-07', SEOUL)).toEqual([{ ...counted[0]!, recipients: 1000 }])
    expect(await report(tenant, '2026-10-07', '2026-10-07', 'UTC')).toEqual(counted)
    // And the bucket's: only the UTC report, for whose zone no day is built, shows it.
    await setBucket(2000)
    expect(await report(tenant, '2026-10-07', '2026-10-07', 'UTC')).toEqual([{ ...counted[0]!, recipients: 2000 }])
    expect(await report(tenant, '2026-10-07', '2026-10-07', SEOUL)).toEqual([{ ...counted[0]!, recipients: 1000 }])

    await setDay(2)
    await setBucket(2)
    expect(await report(tenant, '2026-10-07', '2026-10-07', SEOUL)).toEqual(counted)
  })

  it('rebuilds the days from the buckets when the roll-up runs in another zone, and keeps no day of the old one', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    // 23:30 on 10 March in Seoul (14:30 UTC) and 00:30 on the 11th (15:30 UTC): two days in Seoul, one in UTC.
    await insertMessages(iso.owner, tenant, [
      { createdAt: '2026-03-10T14:30:00Z', recipients: 1 },
      { createdAt: '2026-03-10T15:30:00Z', recipients: 2 },
    ])
    await rollUpSmsUsage(runtime.db, SEOUL)
    const seoulDay = (day: string, recipients: number) => ({ day, ...figures({ messages: 1, recipients, sms: 1, segments: recipients, estimatedCost: 20 * recipients }) })
    expect(await days(tenant)).toEqual([
      { timeZone: SEOUL, ...seoulDay('2026-03-10', 1) },
      { timeZone: SEOUL, ...seoulDay('2026-03-11', 2) },
    ])

    // Accepted at 01:00 on the 11th in Seoul, 16:00 on the 10th in UTC; still pending when the zone changes.
    await insertMessages(iso.owner, tenant, [{ createdAt: '2026-03-10T16:00:00Z', recipients: 4 }])
    const inUtc = [{ date: '2026-03-10', ...figures({ messages: 3, recipients: 7, sms: 3, segments: 7, estimatedCost: 140 }) }]
    const inSeoul = [
      { date: '2026-03-10', ...figures({ messages: 1, recipients: 1, sms: 1, segments: 1, estimatedCost: 20 }) },
      { date: '2026-03-11', ...figures({ messages: 2, recipients: 6, sms: 2, segments: 6, estimatedCost: 120 }) },
    ]
    expect(await report(tenant, '2026-03-09', '2026-03-12', 'UTC')).toEqual(inUtc)

    expect(await rollUpSmsUsage(runtime.db, 'UTC')).toBe(1)
    const { date, ...utcFigures } = inUtc[0]!
    expect(await days(tenant)).toEqual([{ timeZone: 'UTC', day: date, ...utcFigures }])
    const [zone] = await zones()
    expect(zone?.timeZone).toBe('UTC')
    expect(await iso.owner.selectFrom('smsUsageDays').select('tenantId').where('timeZone', '<>', 'UTC').execute()).toEqual([])
    expect(await report(tenant, '2026-03-09', '2026-03-12', 'UTC')).toEqual(inUtc)
    expect(await report(tenant, '2026-03-09', '2026-03-12', SEOUL)).toEqual(inSeoul)

    // The days stay built for UTC: the next roll-up in it only moves deltas.
    expect(await rollUpSmsUsage(runtime.db, 'UTC')).toBe(0)
    expect(await zones()).toEqual([zone])
  })

  it('sums to the same local days from the days as from the buckets and the messages, for random messages of several tenants, in any zone', async () => {
    const seed = Date.now() % 2 ** 31
    const random = seededRandom(seed)
    const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!
    const tenants = [await insertTenantAndSender(iso.owner), await insertTenantAndSender(iso.owner), await insertTenantAndSender(iso.owner)]
    // 1 to 15 March 2026: New York moves to summer time on the 8th, a day of 23 hours.
    const start = Date.parse('2026-03-01T00:00:00Z')
    const randomMessage = (): MessageSpec => ({
      createdAt: new Date(start + Math.floor(random() * 14 * 86_400_000)).toISOString(),
      recipients: 1 + Math.floor(random() * 5),
      type: pick(['SMS', 'LMS'] as const),
      kind: pick(['STAFF', 'STAFF', 'VERIFICATION_CODE'] as const),
      status: pick(['PENDING', 'PENDING', 'PENDING', 'CANCELLED'] as const),
    })
    const ids: { tenant: Tenant; id: number }[] = []
    const sendSome = async () => {
      for (const tenant of tenants) {
        for (let statement = 0; statement < 3; statement++) {
          const made = await asRuntime(tenant, (trx) => insertMessages(trx, tenant, Array.from({ length: 1 + Math.floor(random() * 8) }, randomMessage)))
          ids.push(...made.map((id) => ({ tenant, id })))
        }
      }
    }
    const reportSome = async () => {
      for (let change = 0; change < 15; change++) {
        const { tenant, id } = pick(ids)
        const outcome = random()
        await setCounts(
          tenant,
          id,
          outcome < 0.2 ? { status: 'CANCELLED' } : outcome < 0.3 ? { status: 'PENDING' } : { successCount: Math.floor(random() * 3), failCount: Math.floor(random() * 2) },
        )
      }
    }
    /** What each tenant's report must say in `timeZone`, from the messages themselves. */
    const expected = async (timeZone: string): Promise<Map<number, UsageDay[]>> => {
      const messages = await iso.owner
        .selectFrom('smsMessages')
        .select(['tenantId', 'createdAt', 'recipientCount', 'messageType', 'kind', 'status', 'estimatedSegments', 'totalPrice', 'successCount', 'failCount'])
        .where('tenantId', 'in', tenants.map((tenant) => tenant.tenantId))
        .where('status', '<>', 'CANCELLED')
        .execute()
      const localDate = new Intl.DateTimeFormat('en-CA', { timeZone })
      const byTenant = new Map<number, Map<string, UsageDay>>(tenants.map((tenant) => [tenant.tenantId, new Map()]))
      for (const message of messages) {
        const date = localDate.format(message.createdAt)
        const daysOfTenant = byTenant.get(message.tenantId)!
        const day = daysOfTenant.get(date) ?? { date, ...NONE }
        day.messages += 1
        day.recipients += message.recipientCount
        day.sms += message.messageType === 'SMS' ? 1 : 0
        day.lms += message.messageType === 'LMS' ? 1 : 0
        day.segments += message.estimatedSegments
        day.estimatedCost += message.totalPrice
        day.delivered += message.successCount
        day.failed += message.failCount
        day.verificationCodes += message.kind === 'VERIFICATION_CODE' ? 1 : 0
        daysOfTenant.set(date, day)
      }
      return new Map([...byTenant].map(([tenantId, dates]) => [tenantId, [...dates.values()].sort((a, b) => a.date.localeCompare(b.date))]))
    }
    // Every tenant's days of the zone, compared with the buckets grouped by local day in SQL: both ways, every row.
    const daysDifferFromBuckets = async (timeZone: string) => {
      const { rows } = await sql<{ differing: number }>`
        with from_buckets as (
          select tenant_id, (bucket at time zone ${timeZone}::text)::date as day, sum(messages) as messages,
                 sum(recipients) as recipients, sum(sms) as sms, sum(lms) as lms, sum(segments) as segments,
                 sum(estimated_cost) as estimated_cost, sum(delivered) as delivered, sum(failed) as failed,
                 sum(opted_out) as opted_out, sum(verification_codes) as verification_codes
          from sms_usage group by 1, 2
        ), from_days as (
          select tenant_id, day, messages::numeric, recipients::numeric, sms::numeric, lms::numeric, segments::numeric,
                 estimated_cost::numeric, delivered::numeric, failed::numeric, opted_out::numeric, verification_codes::numeric
          from sms_usage_days where time_zone = ${timeZone}
        )
        select count(*)::int as differing
        from ((select * from from_buckets except select * from from_days) union all (select * from from_days except select * from from_buckets)) d`.execute(iso.owner)
      return rows[0]!.differing
    }
    const checkReports = async (timeZone: string) => {
      const wanted = await expected(timeZone)
      for (const tenant of tenants) {
        expect(await report(tenant, '2026-02-28', '2026-03-16', timeZone), `seed ${seed}, ${timeZone}, tenant ${tenant.tenantId}`).toEqual(wanted.get(tenant.tenantId))
      }
    }

    await sendSome()
    await rollUpSmsUsage(runtime.db, SEOUL)
    for (const timeZone of ['UTC', 'America/New_York', SEOUL]) {
      await reportSome()
      await sendSome()
      // Pending deltas, over days built for another zone (or the buckets): the report is right all the same.
      await checkReports(timeZone)
      await rollUpSmsUsage(runtime.db, timeZone)
      expect(await journal(tenants[0]!)).toEqual([])
      expect(await daysDifferFromBuckets(timeZone), `seed ${seed}, ${timeZone}`).toBe(0)
      await checkReports(timeZone)
    }
  })

  /**
   * Starts a roll-up in `timeZone` in a transaction of its own and holds it open, uncommitted, after the function
   * returned: what it moved is invisible to others until `commit()`.
   */
  async function heldRollUp(timeZone: string): Promise<{ moved: number; commit: () => Promise<void> }> {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let ran!: (moved: number) => void
    const moved = new Promise<number>((resolve) => (ran = resolve))
    const done = iso.owner.transaction().execute(async (trx) => {
      const { rows } = await sql<{ moved: number }>`select svc_roll_up_sms_usage(${timeZone}, ${ROLL_UP_LIMITS.batch}::int) as moved`.execute(trx)
      ran(rows[0]!.moved)
      await released
    })
    return {
      moved: await Promise.race([moved, done.then(() => -1)]),
      commit: async () => {
        release()
        await done
      },
    }
  }
  /** Resolves once a call of the roll-up waits on another session's lock. */
  const rollUpWaiting = () =>
    until(async () => {
      const { rows } = await sql<{ waiting: number }>`
        select count(*)::int as waiting from pg_stat_activity
        where query like '%svc_roll_up_sms_usage%' and cardinality(pg_blocking_pids(pid)) > 0`.execute(iso.owner)
      return rows[0]!.waiting > 0
    })

  itConcurrent('two roll-ups at once move every delta exactly once, and a report meanwhile counts each once', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    await rollUpSmsUsage(runtime.db, SEOUL)
    for (let i = 0; i < 50; i++) await insertMessages(iso.owner, tenant, [{ createdAt: '2026-07-04T03:00:00Z', recipients: 2 }])

    // The first roll-up moves the 50 deltas and waits, uncommitted, holding them.
    const first = await heldRollUp(SEOUL)
    expect(first.moved).toBe(50)

    // Ten more deltas, then the second roll-up: it must wait for the first, find its deltas gone and move only the
    // ten, adding onto the bucket and the day the first one is writing.
    for (let i = 0; i < 10; i++) await insertMessages(iso.owner, tenant, [{ createdAt: '2026-07-04T03:01:00Z', recipients: 2 }])
    const second = rollUpSmsUsage(runtime.db, SEOUL)
    await rollUpWaiting()
    const sixty = [{ date: '2026-07-04', ...figures({ messages: 60, recipients: 120, sms: 60, segments: 120, estimatedCost: 2400 }) }]
    expect(await report(tenant, '2026-07-04', '2026-07-04')).toEqual(sixty)
    await first.commit()
    expect(await second).toBe(10)

    expect(await journal(tenant)).toEqual([])
    expect(await totals(tenant)).toEqual([
      { bucket: '2026-07-04T03:00:00.000Z', ...figures({ messages: 60, recipients: 120, sms: 60, segments: 120, estimatedCost: 2400 }) },
    ])
    expect(await days(tenant)).toEqual(sixty.map(({ date, ...day }) => ({ timeZone: SEOUL, day: date, ...day })))
    expect(await report(tenant, '2026-07-04', '2026-07-04')).toEqual(sixty)
  })

  itConcurrent('a roll-up waits for one rebuilding the days for another zone, then only moves its deltas', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    await insertMessages(iso.owner, tenant, [{ createdAt: '2026-07-05T03:00:00Z', recipients: 2 }])
    await rollUpSmsUsage(runtime.db, SEOUL)
    await insertMessages(iso.owner, tenant, [{ createdAt: '2026-07-05T03:00:00Z', recipients: 3 }])

    // Instances that disagree on the zone: the first rebuilds the days in UTC and holds them, uncommitted.
    const first = await heldRollUp('UTC')
    expect(first.moved).toBeGreaterThanOrEqual(1)
    await insertMessages(iso.owner, tenant, [{ createdAt: '2026-07-05T03:00:00Z', recipients: 4 }])
    const second = rollUpSmsUsage(runtime.db, 'UTC')
    await rollUpWaiting()
    await first.commit()
    expect(await second).toBe(1)

    const nine = figures({ messages: 3, recipients: 9, sms: 3, segments: 9, estimatedCost: 180 })
    expect(await days(tenant)).toEqual([{ timeZone: 'UTC', day: '2026-07-05', ...nine }])
    expect((await zones()).map((zone) => zone.timeZone)).toEqual(['UTC'])
    expect(await report(tenant, '2026-07-05', '2026-07-05', 'UTC')).toEqual([{ date: '2026-07-05', ...nine }])
  })

  it("shows the runtime role only its tenant's usage, lets it journal but never write the totals, the days or their zone, or rewrite the journal", async () => {
    const [a, b] = [await insertTenantAndSender(iso.owner), await insertTenantAndSender(iso.owner)]
    // Each tenant with rolled-up totals and a pending delta.
    for (const tenant of [a, b]) await insertMessages(iso.owner, tenant, [{ createdAt: '2026-08-05T04:00:00Z' }])
    await rollUpSmsUsage(runtime.db, SEOUL)
    for (const tenant of [a, b]) await insertMessages(iso.owner, tenant, [{ createdAt: '2026-08-05T04:00:00Z' }])
    for (const table of ['sms_usage', 'sms_usage_days', 'sms_usage_changes']) {
      const seen = await asRuntime(a, async (trx) =>
        (await sql<{ tenantId: number }>`select tenant_id from ${sql.table(table)}`.execute(trx)).rows.map((row) => row.tenantId),
      )
      expect(new Set(seen), table).toEqual(new Set([a.tenantId]))
    }
    expect(await report(b, '2026-08-05', '2026-08-05')).toEqual([
      { date: '2026-08-05', ...figures({ messages: 2, recipients: 2, sms: 2, segments: 2, estimatedCost: 40 }) },
    ])

    const denied = { code: '42501' }
    const refused = [
      sql`insert into sms_usage (tenant_id, bucket, messages) values (${a.tenantId}, now(), 1000)`,
      sql`update sms_usage set messages = 0 where tenant_id = ${a.tenantId}`,
      sql`delete from sms_usage where tenant_id = ${a.tenantId}`,
      sql`update sms_usage_changes set messages = 0 where tenant_id = ${a.tenantId}`,
      sql`delete from sms_usage_changes where tenant_id = ${a.tenantId}`,
      sql`insert into sms_usage_days (tenant_id, time_zone, day, messages) values (${a.tenantId}, 'UTC', current_date, 1000)`,
      sql`update sms_usage_days set messages = 0 where tenant_id = ${a.tenantId}`,
      sql`delete from sms_usage_days where tenant_id = ${a.tenantId}`,
      sql`insert into sms_usage_zones (time_zone) values ('UTC')`,
      sql`update sms_usage_zones set time_zone = 'UTC'`,
      sql`delete from sms_usage_zones`,
    ]
    for (const statement of refused) await expect(asRuntime(a, (trx) => statement.execute(trx))).rejects.toMatchObject(denied)
    // It reads which zone the days are of, as every report does.
    expect(await asRuntime(a, (trx) => trx.selectFrom('smsUsageZones').select('timeZone').execute())).toEqual([{ timeZone: SEOUL }])
    expect(await report(a, '2026-08-05', '2026-08-05')).toEqual(await report(b, '2026-08-05', '2026-08-05'))
  })
})

describe('the sms-usage migration', () => {
  itPostgres('backfills the totals from the messages stored before it, cancelled ones left out', async () => {
    const iso = await isolatedDatabase({ migrated: false })
    try {
      const names = Object.keys(migrations)
      const previous = names[names.indexOf('2026-11-26T04-10-00-sms-usage') - 1]!
      const migrator = new Migrator({ db: iso.owner, provider: { getMigrations: async () => migrations } })
      const { error } = await migrator.migrateTo(previous)
      expect(error).toBeUndefined()

      const tenant = await insertTenantAndSender(iso.owner)
      await insertMessages(iso.owner, tenant, [
        { createdAt: '2026-09-06T05:00:00Z', recipients: 3, status: 'PARTIAL', successCount: 2, failCount: 1 },
        { createdAt: '2026-09-06T05:14:00Z', type: 'LMS', kind: 'VERIFICATION_CODE', status: 'SENT', successCount: 1 },
        { createdAt: '2026-09-06T05:15:00Z', recipients: 4, status: 'CANCELLED' },
        { createdAt: '2026-09-06T05:16:00Z', recipients: 2 },
      ])
      await migrateToLatest(iso.owner)

      const rows = await iso.owner.selectFrom('smsUsage').select(['bucket', ...SELECTED_FIGURES]).where('tenantId', '=', tenant.tenantId).orderBy('bucket').execute()
      expect(rows.map(({ bucket, ...rest }) => ({ bucket: bucket.toISOString(), ...rest }))).toEqual([
        {
          bucket: '2026-09-06T05:00:00.000Z',
          ...figures({ messages: 2, recipients: 4, sms: 1, lms: 1, segments: 4, estimatedCost: 110, delivered: 3, failed: 1, verificationCodes: 1 }),
        },
        { bucket: '2026-09-06T05:15:00.000Z', ...figures({ messages: 1, recipients: 2, sms: 1, segments: 2, estimatedCost: 40 }) },
      ])
      expect(await iso.owner.selectFrom('smsUsageChanges').selectAll().execute()).toEqual([])

      // No days yet: only the first roll-up knows the zone, and builds them from the backfilled buckets.
      expect(await iso.owner.selectFrom('smsUsageZones').selectAll().execute()).toEqual([])
      expect(await iso.owner.selectFrom('smsUsageDays').selectAll().execute()).toEqual([])
      await rollUpSmsUsage(iso.owner, SEOUL)
      const days = await iso.owner
        .selectFrom('smsUsageDays')
        .select(['timeZone', sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'), ...SELECTED_FIGURES])
        .execute()
      expect(days).toEqual([
        {
          timeZone: SEOUL,
          day: '2026-09-06',
          ...figures({ messages: 3, recipients: 6, sms: 2, lms: 1, segments: 6, estimatedCost: 150, delivered: 3, failed: 1, verificationCodes: 1 }),
        },
      ])
    } finally {
      await iso.drop()
    }
  })
})
