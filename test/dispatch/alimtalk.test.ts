import pino from 'pino'
import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { applyDeliveryReports } from '../../lib/dispatch/delivery/apply-reports.js'
import { parseDeliveryReports } from '../../lib/dispatch/delivery/delivery-report.js'
import { createDispatcher } from '../../lib/dispatch/dispatcher.js'
import { createMockProvider } from '../../lib/dispatch/providers/mock.js'
import { ALIMTALK_PRICE, insertPendingAlimtalk, insertTenantAndSender, messageState, type AlimtalkSpec } from '../support/dispatch-fixtures.js'
import { useDispatchTestBed } from './dispatch-test-bed.js'

const CONTENT = '#{name} 학생 #{className} 출석 확인: #{time}'
const LONG_CONTENT = `#{name} 학생 안내: ${'수업 일정이 변경되었습니다. '.repeat(4)}`

/**
 * AlimTalk messages through the dispatcher and the live adapter, against the fake provider: the same claims,
 * groups and hand-over as SMS, each recipient's notice its rendered template, the fake's delivery reports applied
 * as the webhook applies them (delivered_via, the fallback's price, the usage journal).
 */
describe('dispatching AlimTalk messages', () => {
  const bed = useDispatchTestBed(4)
  let tenant: Awaited<ReturnType<typeof insertTenantAndSender>>

  beforeEach(async () => {
    tenant = await insertTenantAndSender(bed.iso.owner)
    bed.fake.kakao.putTemplate({ templateId: 'KA01TP', channelId: 'KA01PF', name: 'attendance', content: CONTENT, status: 'APPROVED' })
    bed.fake.kakao.putTemplate({ templateId: 'KA02TP', channelId: 'KA01PF', name: 'schedule', content: LONG_CONTENT, status: 'APPROVED' })
    bed.fake.kakao.putTemplate({ templateId: 'KA03TP', channelId: 'KA01PF', name: 'inspecting', content: CONTENT, status: 'INSPECTING' })
  })
  afterEach(() => bed.fake.kakao.failFor([]))

  const two = (): AlimtalkSpec['recipients'] => [
    { phone: '01011110000', variables: { name: '김민준', className: '수학A' } },
    { phone: '01011110001', variables: { name: '이서연', className: '영어B', time: '16:00' } },
  ]

  /** Dispatches once and applies the fake's report of every message it sent for `smsId`, as the webhook would. */
  async function dispatchAndReport(smsId: number) {
    await bed.dispatcher().runOnce()
    const reports = parseDeliveryReports(bed.sentFor(smsId).map((message) => bed.fake.reportOf(message)))
    await applyDeliveryReports(bed.database.db, reports)
  }

  const recipientsOf = (smsId: number) =>
    bed.iso.owner
      .selectFrom('smsRecipients')
      .select(['recipientIndex', 'deliveryStatus', 'deliveredVia', 'providerStatusCode'])
      .where('smsId', '=', smsId)
      .orderBy('recipientIndex')
      .execute()
  const priceOf = (smsId: number) =>
    bed.iso.owner.selectFrom('smsMessages').select(['status', 'totalPrice', 'alimtalkCount', 'fallbackCount']).where('id', '=', smsId).executeTakeFirstOrThrow()

  it("hands over one ATA notice per recipient: the template rendered with the recipient's values over the message's", async () => {
    const smsId = await insertPendingAlimtalk(bed.iso.owner, tenant, { content: CONTENT, variables: { time: '15:00' }, recipients: two() })
    await dispatchAndReport(smsId)

    expect(bed.sentFor(smsId).map(({ to, from, type, text, kakaoOptions }) => ({ to, from, type, text, kakaoOptions }))).toEqual([
      {
        to: '01011110000',
        from: '0212345678',
        type: 'ATA',
        text: '김민준 학생 수학A 출석 확인: 15:00',
        kakaoOptions: { pfId: 'KA01PF', templateId: 'KA01TP', variables: { '#{name}': '김민준', '#{className}': '수학A', '#{time}': '15:00' } },
      },
      {
        to: '01011110001',
        from: '0212345678',
        type: 'ATA',
        text: '이서연 학생 영어B 출석 확인: 16:00',
        kakaoOptions: { pfId: 'KA01PF', templateId: 'KA01TP', variables: { '#{name}': '이서연', '#{className}': '영어B', '#{time}': '16:00' } },
      },
    ])
    expect(await recipientsOf(smsId)).toEqual([
      { recipientIndex: 0, deliveryStatus: 'DELIVERED', deliveredVia: 'ALIMTALK', providerStatusCode: '4000' },
      { recipientIndex: 1, deliveryStatus: 'DELIVERED', deliveredVia: 'ALIMTALK', providerStatusCode: '4000' },
    ])
    expect(await priceOf(smsId)).toEqual({ status: 'SENT', totalPrice: 2 * ALIMTALK_PRICE, alimtalkCount: 2, fallbackCount: 0 })
  })

  it('never sends a text that differs from the template by one character: the provider refuses it (3108), the recipient FAILED', async () => {
    // Frozen at acceptance with a trailing period the template at the provider does not have.
    const smsId = await insertPendingAlimtalk(bed.iso.owner, tenant, { content: `${CONTENT}.`, variables: { time: '15:00' }, recipients: two() })
    await dispatchAndReport(smsId)

    expect(bed.sentFor(smsId)).toEqual([])
    expect(await recipientsOf(smsId)).toEqual([
      { recipientIndex: 0, deliveryStatus: 'FAILED', deliveredVia: null, providerStatusCode: '3108' },
      { recipientIndex: 1, deliveryStatus: 'FAILED', deliveredVia: null, providerStatusCode: '3108' },
    ])
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'FAILED', failCount: 2 })
  })

  it('a template no longer APPROVED at the provider is refused (3016) and its recipients FAILED', async () => {
    const smsId = await insertPendingAlimtalk(bed.iso.owner, tenant, {
      content: CONTENT,
      providerTemplateId: 'KA03TP',
      variables: { time: '15:00' },
      recipients: two(),
    })
    await dispatchAndReport(smsId)

    expect(bed.sentFor(smsId)).toEqual([])
    expect((await recipientsOf(smsId)).map((recipient) => [recipient.deliveryStatus, recipient.providerStatusCode])).toEqual([
      ['FAILED', '3016'],
      ['FAILED', '3016'],
    ])
  })

  it('with fallback NONE a Kakao failure stays FAILED: disableSms sent, nothing re-priced or charged back', async () => {
    const smsId = await insertPendingAlimtalk(bed.iso.owner, tenant, {
      content: CONTENT,
      fallback: 'NONE',
      variables: { time: '15:00' },
      recipients: two(),
    })
    bed.fake.kakao.failFor(['01011110001'])
    await dispatchAndReport(smsId)

    expect(bed.sentFor(smsId).map((message) => message.kakaoOptions?.disableSms)).toEqual([true, true])
    expect(await recipientsOf(smsId)).toEqual([
      { recipientIndex: 0, deliveryStatus: 'DELIVERED', deliveredVia: 'ALIMTALK', providerStatusCode: '4000' },
      { recipientIndex: 1, deliveryStatus: 'FAILED', deliveredVia: null, providerStatusCode: '3104' },
    ])
    expect(await priceOf(smsId)).toEqual({ status: 'PARTIAL', totalPrice: 2 * ALIMTALK_PRICE, alimtalkCount: 1, fallbackCount: 0 })
  })

  it('a recipient delivered by the fallback is re-priced at its SMS or LMS price, and the total follows', async () => {
    const short = await insertPendingAlimtalk(bed.iso.owner, tenant, { content: CONTENT, variables: { time: '15:00' }, recipients: two() })
    const long = await insertPendingAlimtalk(bed.iso.owner, tenant, {
      content: LONG_CONTENT,
      providerTemplateId: 'KA02TP',
      messageType: 'LMS',
      recipients: [
        { phone: '01011110002', variables: { name: '박지호' } },
        { phone: '01011110003', variables: { name: '최유나' } },
      ],
    })
    bed.fake.kakao.failFor(['01011110001', '01011110003'])
    await dispatchAndReport(short)
    const reports = parseDeliveryReports(bed.sentFor(long).map((message) => bed.fake.reportOf(message)))
    await applyDeliveryReports(bed.database.db, reports)

    expect(bed.sentFor(short).map((message) => message.kakaoOptions?.disableSms)).toEqual([undefined, undefined])
    expect((await recipientsOf(short)).map((recipient) => recipient.deliveredVia)).toEqual(['ALIMTALK', 'SMS'])
    expect((await recipientsOf(long)).map((recipient) => recipient.deliveredVia)).toEqual(['ALIMTALK', 'LMS'])
    expect(await priceOf(short)).toEqual({ status: 'SENT', totalPrice: ALIMTALK_PRICE + 20, alimtalkCount: 1, fallbackCount: 1 })
    expect(await priceOf(long)).toEqual({ status: 'SENT', totalPrice: ALIMTALK_PRICE + 50, alimtalkCount: 1, fallbackCount: 1 })

    // The usage journal: over AlimTalk and by the fallback, and the cost as re-priced.
    const { rows } = await sql<{ alimtalk: number; fallbacks: number; cost: number; delivered: number }>`
      select sum(alimtalk)::int as alimtalk, sum(fallbacks)::int as fallbacks, sum(estimated_cost)::int as cost,
             sum(delivered)::int as delivered
      from sms_usage_changes where tenant_id = ${tenant.tenantId}`.execute(bed.iso.owner)
    expect(rows[0]).toEqual({ alimtalk: 2, fallbacks: 2, cost: 2 * ALIMTALK_PRICE + 20 + 50, delivered: 4 })
  })

  it('a report applied twice changes nothing the second time (the provider retries its webhook)', async () => {
    const smsId = await insertPendingAlimtalk(bed.iso.owner, tenant, { content: CONTENT, variables: { time: '15:00' }, recipients: two() })
    bed.fake.kakao.failFor(['01011110000'])
    await dispatchAndReport(smsId)
    const again = parseDeliveryReports(bed.sentFor(smsId).map((message) => bed.fake.reportOf(message)))
    expect(await applyDeliveryReports(bed.database.db, again)).toEqual({ processed: 0, ignored: 2 })
    expect(await priceOf(smsId)).toEqual({ status: 'SENT', totalPrice: ALIMTALK_PRICE + 20, alimtalkCount: 1, fallbackCount: 1 })
  })

  it('the mock provider settles AlimTalk as it settles SMS, its reports saying ATA', async () => {
    const smsId = await insertPendingAlimtalk(bed.iso.owner, tenant, { content: CONTENT, variables: { time: '15:00' }, recipients: two() })
    const provider = createMockProvider()
    const reported: string[] = []
    const spied = {
      ...provider,
      afterRecorded: (sent: Parameters<NonNullable<typeof provider.afterRecorded>>[0], report: Parameters<NonNullable<typeof provider.afterRecorded>>[1]) =>
        provider.afterRecorded!(sent, async (reports) => {
          reported.push(...reports.map((entry) => entry.type ?? 'none'))
          await report(reports)
        }),
    }
    const dispatcher = createDispatcher({
      db: bed.database.db,
      provider: spied,
      log: pino({ level: 'silent' }),
      batchSize: 100,
      maxAttempts: 3,
      retryBaseSeconds: 30,
    })
    await dispatcher.runOnce()

    expect(reported).toEqual(['ATA', 'ATA'])
    expect((await recipientsOf(smsId)).map((recipient) => [recipient.deliveryStatus, recipient.deliveredVia])).toEqual([
      ['DELIVERED', 'ALIMTALK'],
      ['DELIVERED', 'ALIMTALK'],
    ])
    expect(await priceOf(smsId)).toEqual({ status: 'SENT', totalPrice: 2 * ALIMTALK_PRICE, alimtalkCount: 2, fallbackCount: 0 })
  })
})
