import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import type { Clock } from '../../lib/clock.js'
import { insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { fakeExtSmsCredentials, useDispatchTestBed } from '../dispatch/dispatch-test-bed.js'
import { deliveryReportBody, providerSecretHeader } from '../support/fakes/extsms-server.js'
import { useTestApp } from '../support/helper.js'
import { carrierBytes } from './advertisement-send-fixtures.js'
import { recordConsents } from './advertising-fixtures.js'

// What the provider gets for an advertisement accepted through the send route: the (광고) frame the message was
// accepted with, and none of the numbers put on the opt-out list since (their price and quota given back). The
// quiet hours are kept out of the way: the app (which judges a send) and the dispatcher both read noon in Seoul.

const NOON: Clock = () => new Date('2027-03-16T12:00:00+09:00')
const WEBHOOK_TOKEN = 'advertising-webhook-token'
const ACADEMY = '해오름학원'
const OPT_OUT_NUMBER = '0801234567'
const CONTENT = '{name} 학부모님, 겨울방학 특강 10% 할인'

// Every number this file advertises to has consented (advertisement-consent.test.ts covers those without).
const CONSENTING = ['0', '1', '2', '3', '4', '5'].map((n) => `0102000000${n}`).concat(['01021000001', '01021000002', '01021000003', '01022000001', '01022000002'])

const framed = (name: string) => `(광고)${ACADEMY}\n${name} 학부모님, 겨울방학 특강 10% 할인\n무료거부 ${OPT_OUT_NUMBER}`

/** The local (Seoul) day of `at`, as the quota and the usage report key it. */
const seoulDay = (at: Date) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Seoul' }).format(at)

describe('advertisements at dispatch: the frame and the opt-out list', () => {
  const bed = useDispatchTestBed(4)
  const { sentFor } = bed

  const app = useTestApp(() => ({
    env: {
      DATABASE_URL: bed.iso.url,
      SVC_SMS_PROVIDER: 'extsms',
      SVC_SMS_EXTSMS_API_KEY: fakeExtSmsCredentials.apiKey,
      SVC_SMS_EXTSMS_API_SECRET: fakeExtSmsCredentials.apiSecret,
      SVC_SMS_EXTSMS_BASE_URL: bed.fake.url,
      SVC_SMS_EXTSMS_WEBHOOK_TOKEN: WEBHOOK_TOKEN,
    },
    clock: NOON,
  }))

  const dispatchAtNoon = () => bed.dispatcher({ clock: NOON }).runOnce()

  /** A tenant named ACADEMY with an approved sender and an opt-out number, and its MANAGER's request headers. */
  async function advertiser() {
    const staff = await insertTenantAndSender(bed.iso.owner)
    await bed.iso.owner.updateTable('tenants').set({ name: ACADEMY }).where('id', '=', staff.tenantId).execute()
    await bed.iso.owner.insertInto('smsAdvertisingSettings').values({ tenantId: staff.tenantId, optOutNumber: OPT_OUT_NUMBER }).execute()
    await recordConsents({ id: staff.tenantId }, CONSENTING, { db: bed.iso.owner })
    const { access } = await issueTokenPair(
      app.current.tokenKeys,
      { userId: staff.senderId, tenantId: staff.tenantId, tenantSlug: staff.slug, role: 'MANAGER', sid: randomUUID() },
      { accessSeconds: 600, refreshSeconds: 1200 },
    )
    return { tenantId: staff.tenantId, headers: { authorization: `Bearer ${access.token}` } }
  }
  type Advertiser = Awaited<ReturnType<typeof advertiser>>

  async function send(who: Advertiser, purpose: 'ADVERTISEMENT' | 'INFORMATIONAL', people: [string, string][], content = CONTENT, title = 'Winter') {
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers: { ...who.headers, 'idempotency-key': randomUUID() },
      payload: { title, content, purpose, recipients: people.map(([phone, name]) => ({ phone, name })) },
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json<{ id: number; title: string; messageType: string; estimatedSegments: number; unitPrice: number; totalPrice: number; optedOutCount: number }>()
  }

  async function optOut(who: Advertiser, phone: string) {
    const response = await app.current.inject({ method: 'POST', url: '/v1/sms/opt-outs', headers: who.headers, payload: { phone } })
    expect(response.statusCode, response.body).toBe(201)
  }

  async function quotaUsed(tenantId: number) {
    const rows = await bed.iso.owner.selectFrom('smsDailyUsage').select('recipients').where('tenantId', '=', tenantId).execute()
    return rows.map((row) => row.recipients)
  }

  async function pricing(smsId: number) {
    return bed.iso.owner
      .selectFrom('smsMessages')
      .select(['optedOutCount', 'estimatedSegments', 'totalPrice', 'createdAt'])
      .where('id', '=', smsId)
      .executeTakeFirstOrThrow()
  }

  it('hands the provider each recipient its text framed as accepted, and a notice its text unframed', async () => {
    const who = await advertiser()
    const ad = await send(who, 'ADVERTISEMENT', [['010-2000-0001', '김민준'], ['010-2000-0002', '이서연']])
    const notice = await send(who, 'INFORMATIONAL', [['010-2000-0001', '김민준']])
    // Renamed and renumbered before dispatch: the message keeps the frame its size and price were answered with.
    await bed.iso.owner.updateTable('tenants').set({ name: '새이름학원' }).where('id', '=', who.tenantId).execute()
    await bed.iso.owner.updateTable('smsAdvertisingSettings').set({ optOutNumber: '0809999999' }).where('tenantId', '=', who.tenantId).execute()
    expect(await dispatchAtNoon()).toBe(2)

    expect(sentFor(ad.id).map((message) => [message.to, message.from, message.text])).toEqual([
      ['01020000001', '0212345678', framed('김민준')],
      ['01020000002', '0212345678', framed('이서연')],
    ])
    expect(sentFor(notice.id).map((message) => message.text)).toEqual(['김민준 학부모님, 겨울방학 특강 10% 할인'])
  })

  it('never renders a placeholder in the academy name', async () => {
    const who = await advertiser()
    await bed.iso.owner.updateTable('tenants').set({ name: '{name}학원' }).where('id', '=', who.tenantId).execute()
    const ad = await send(who, 'ADVERTISEMENT', [['010-2000-0003', '박지호']], '{name}님 안녕하세요')
    expect(await dispatchAtNoon()).toBe(1)
    expect(sentFor(ad.id).map((message) => message.text)).toEqual([`(광고){name}학원\n박지호님 안녕하세요\n무료거부 ${OPT_OUT_NUMBER}`])
  })

  it('sends as LMS, its subject the label and its title, an advertisement that only its frame takes past 90 bytes', async () => {
    const who = await advertiser()
    // 60 bytes alone; framed, 60 + 17 (the label and the academy's line) + 20 (the opt-out line) = 97.
    const content = 'x'.repeat(60)
    const ad = await send(who, 'ADVERTISEMENT', [['010-2000-0004', 'A']], content)
    expect(ad.messageType).toBe('LMS')
    expect(await dispatchAtNoon()).toBe(1)
    // Phones show the subject first: it carries the label as the text does.
    expect(sentFor(ad.id).map((message) => [message.type, message.subject, message.text])).toEqual([
      ['LMS', '(광고)Winter', `(광고)${ACADEMY}\n${content}\n무료거부 ${OPT_OUT_NUMBER}`],
    ])
    expect((await messageState(bed.iso.owner, ad.id)).status).toBe('DISPATCHED')
  })

  it('cuts an advertisement subject to 40 bytes between characters, and answers the title as sent', async () => {
    const who = await advertiser()
    // The label is 6 bytes, `a` 1, each syllable 2: 6 + 1 + 2 x 17 = 41, so the 17th syllable does not fit whole.
    const title = `a${'겨울방학특강안내드립니다수강생모집'.slice(0, 17)}`
    const ad = await send(who, 'ADVERTISEMENT', [['010-2000-0005', 'A']], 'x'.repeat(200), title)
    expect(ad).toMatchObject({ messageType: 'LMS', title })
    expect(await dispatchAtNoon()).toBe(1)
    const [sent] = sentFor(ad.id)
    expect(sent?.subject).toBe(`(광고)${title.slice(0, 17)}`)
    expect(carrierBytes(sent!.subject!)).toBe(39)
    const detail = await app.current.inject({ method: 'GET', url: `/v1/sms/history/${ad.id}`, headers: who.headers })
    expect(detail.json().title).toBe(title)
  })

  it('gives a notice sent as LMS its title alone as subject', async () => {
    const who = await advertiser()
    const notice = await send(who, 'INFORMATIONAL', [['010-2000-0006', 'A']], 'x'.repeat(200), 'Winter')
    expect(await dispatchAtNoon()).toBe(1)
    expect(sentFor(notice.id).map((message) => [message.type, message.subject])).toEqual([['LMS', 'Winter']])
  })

  it('leaves out a number listed after acceptance, gives back its price and quota, and settles SENT', async () => {
    const who = await advertiser()
    const ad = await send(who, 'ADVERTISEMENT', [['010-2100-0001', 'A'], ['010-2100-0002', 'B'], ['010-2100-0003', 'C']])
    expect(ad).toMatchObject({ estimatedSegments: 3, totalPrice: 3 * ad.unitPrice, optedOutCount: 0 })
    expect(await quotaUsed(who.tenantId)).toEqual([3])

    // Written as digits, the recipient with hyphens: one number.
    await optOut(who, '01021000002')
    expect(await dispatchAtNoon()).toBe(1)

    const sent = sentFor(ad.id)
    expect(sent.map((message) => message.to)).toEqual(['01021000001', '01021000003'])
    const state = await messageState(bed.iso.owner, ad.id)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1 })
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['DISPATCHED', 'OPTED_OUT', 'DISPATCHED'])
    const priced = await pricing(ad.id)
    expect(priced).toMatchObject({ optedOutCount: 1, estimatedSegments: 2, totalPrice: 2 * ad.unitPrice })
    expect(await quotaUsed(who.tenantId)).toEqual([2])

    const reports = await app.current.inject({
      method: 'POST',
      url: '/v1/sms/solapi/webhook',
      headers: { 'x-provider-secret': providerSecretHeader(WEBHOOK_TOKEN) },
      payload: deliveryReportBody(sent),
    })
    expect(reports.json()).toEqual({ processed: 2, ignored: 0 })
    const detail = await app.current.inject({ method: 'GET', url: `/v1/sms/history/${ad.id}`, headers: who.headers })
    expect(detail.json()).toMatchObject({ status: 'SENT', successCount: 2, failCount: 0, optedOutCount: 1, recipientCount: 3 })

    const day = seoulDay(priced.createdAt)
    const usage = await app.current.inject({ method: 'GET', url: `/v1/sms/usage?from=${day}&to=${day}`, headers: who.headers })
    expect(usage.json().totals).toMatchObject({ messages: 1, recipients: 3, delivered: 2, optedOut: 1, estimatedCost: 2 * ad.unitPrice })
  })

  it('leaves out a number whose consent was withdrawn after acceptance as NO_CONSENT, gives back its price and quota, and settles SENT', async () => {
    const who = await advertiser()
    await recordConsents({ id: who.tenantId }, ['01024000001', '01024000002', '01024000003'], { db: bed.iso.owner })
    const ad = await send(who, 'ADVERTISEMENT', [['010-2400-0001', 'A'], ['010-2400-0002', 'B'], ['010-2400-0003', 'C']])
    expect(ad).toMatchObject({ estimatedSegments: 3, optedOutCount: 0 })
    const withdrawn = await app.current.inject({ method: 'DELETE', url: '/v1/sms/ad-consents/010-2400-0003', headers: who.headers })
    expect(withdrawn.statusCode).toBe(204)
    expect(await dispatchAtNoon()).toBe(1)

    const sent = sentFor(ad.id)
    expect(sent.map((message) => message.to)).toEqual(['01024000001', '01024000002'])
    const state = await messageState(bed.iso.owner, ad.id)
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['DISPATCHED', 'DISPATCHED', 'NO_CONSENT'])
    expect(await bed.iso.owner.selectFrom('smsMessages').select(['noConsentCount', 'estimatedSegments', 'totalPrice']).where('id', '=', ad.id).executeTakeFirst()).toEqual({
      noConsentCount: 1,
      estimatedSegments: 2,
      totalPrice: 2 * ad.unitPrice,
    })
    expect(await quotaUsed(who.tenantId)).toEqual([2])

    await app.current.inject({
      method: 'POST',
      url: '/v1/sms/solapi/webhook',
      headers: { 'x-provider-secret': providerSecretHeader(WEBHOOK_TOKEN) },
      payload: deliveryReportBody(sent),
    })
    const detail = await app.current.inject({ method: 'GET', url: `/v1/sms/history/${ad.id}`, headers: who.headers })
    expect(detail.json()).toMatchObject({ status: 'SENT', successCount: 2, noConsentCount: 1, optedOutCount: 0, recipientCount: 3 })
    const day = seoulDay((await pricing(ad.id)).createdAt)
    const usage = await app.current.inject({ method: 'GET', url: `/v1/sms/usage?from=${day}&to=${day}`, headers: who.headers })
    expect(usage.json().totals).toMatchObject({ messages: 1, recipients: 3, delivered: 2, noConsent: 1, estimatedCost: 2 * ad.unitPrice })
  })

  it('sends nothing when every remaining recipient was listed after acceptance, and ends the message FAILED', async () => {
    const who = await advertiser()
    const ad = await send(who, 'ADVERTISEMENT', [['010-2200-0001', 'A'], ['010-2200-0002', 'B']])
    await optOut(who, '010-2200-0001')
    await optOut(who, '+82 10 2200 0002')
    const callsBefore = bed.fake.calls.length
    expect(await dispatchAtNoon()).toBe(1)

    expect(sentFor(ad.id)).toEqual([])
    expect(bed.fake.calls.length).toBe(callsBefore)
    const state = await messageState(bed.iso.owner, ad.id)
    expect(state).toMatchObject({ status: 'FAILED', successCount: 0, failCount: 0, sentAt: null, claimToken: null })
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['OPTED_OUT', 'OPTED_OUT'])
    expect(await pricing(ad.id)).toMatchObject({ optedOutCount: 2, estimatedSegments: 0, totalPrice: 0 })
    expect(await quotaUsed(who.tenantId)).toEqual([0])
  })

  it('sends a notice to a listed number, listed before or after it was accepted', async () => {
    const who = await advertiser()
    await optOut(who, '010-2300-0001')
    const notice = await send(who, 'INFORMATIONAL', [['010-2300-0001', 'A'], ['010-2300-0002', 'B']])
    await optOut(who, '010-2300-0002')
    expect(await dispatchAtNoon()).toBe(1)

    expect(sentFor(notice.id).map((message) => message.to)).toEqual(['01023000001', '01023000002'])
    const state = await messageState(bed.iso.owner, notice.id)
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['DISPATCHED', 'DISPATCHED'])
    expect(await pricing(notice.id)).toMatchObject({ optedOutCount: 0, estimatedSegments: 2, totalPrice: 2 * notice.unitPrice })
    expect(await quotaUsed(who.tenantId)).toEqual([2])
  })
})
