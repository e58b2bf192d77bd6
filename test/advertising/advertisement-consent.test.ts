import { describe, expect, it } from 'vitest'
import { storedAuditEvents } from '../audit/audit-fixtures.js'
import { expectProblem } from '../sms/sms-fixtures.js'
import { recipientRows, send } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'
import { footprint, quotaCounted, seoul, useAppAt } from './advertisement-send-fixtures.js'
import { listOptOut, recordConsents, setOptOutNumber } from './advertising-fixtures.js'

const DAY_MS = 86_400_000
const three = [
  { phone: '010-7100-0001', name: 'Kim' },
  { phone: '010-7100-0002', name: 'Lee' },
  { phone: '010-7100-0003', name: 'Park' },
]
const advertisement = { recipients: three, title: 'Winter', content: 'Winter class, 10% off', purpose: 'ADVERTISEMENT' }

type AnsweredRecipient = { name: string; deliveryStatus: string }
const statuses = (body: { recipients: AnsweredRecipient[] }) => body.recipients.map((recipient) => [recipient.name, recipient.deliveryStatus])

describe('advertisements reach only numbers with a live consent (consentRequired, the default)', () => {
  // Noon in Seoul, outside the quiet hours; a test that moves the clock keeps to daytime too.
  const noon = seoul('2026-03-10T12:00:00')
  const app = useAppAt(noon)
  const unitPrice = () => app.current.env.SVC_SMS_PRICE_SMS

  async function advertiser() {
    app.setTime(noon)
    const staff = await academy(app.current)
    await setOptOutNumber(app.current, staff.owner)
    return staff
  }

  const recordConsent = (who: Actor, phone: string) =>
    app.current.inject({ method: 'POST', url: '/v1/sms/ad-consents', headers: who.headers, payload: { phone, source: 'WRITTEN', evidence: 'form 12' } })

  it('leaves out a number without consent in a 3-recipient advertisement as NO_CONSENT: unsent, unpriced, out of the quota', async () => {
    const { tenant, owner } = await advertiser()
    await recordConsents(tenant, ['010-7100-0001', '010-7100-0003'])
    const sent = await send(app.current, owner, advertisement)
    expect(sent.statusCode).toBe(201)
    expect(sent.json()).toMatchObject({
      recipientCount: 3,
      optedOutCount: 0,
      noConsentCount: 1,
      estimatedSegments: 2,
      totalPrice: 2 * unitPrice(),
    })
    expect(statuses(sent.json())).toEqual([
      ['Kim', 'PENDING'],
      ['Lee', 'NO_CONSENT'],
      ['Park', 'PENDING'],
    ])
    const stored = await recipientRows(tenant, sent.json().id)
    expect(stored.map((row) => [row.phone, row.deliveryStatus])).toEqual([
      ['01071000001', 'PENDING'],
      ['01071000002', 'NO_CONSENT'],
      ['01071000003', 'PENDING'],
    ])
    expect(await quotaCounted(tenant.id)).toBe(2)
    const detail = await app.current.inject({ method: 'GET', url: `/v1/sms/history/${sent.json().id}`, headers: owner.headers })
    expect(detail.json()).toMatchObject({ noConsentCount: 1, optedOutCount: 0 })
  })

  it('counts a listed number OPTED_OUT whatever its consent, and answers RECIPIENTS_WITHOUT_CONSENT when no one may receive it', async () => {
    const { tenant, owner, manager } = await advertiser()
    await recordConsents(tenant, ['010-7100-0001'])
    await listOptOut(app.current, manager, '010-7100-0001')
    await listOptOut(app.current, manager, '010-7100-0002')
    const before = await footprint(tenant.id)
    expectProblem(await send(app.current, owner, advertisement), 400, 'RECIPIENTS_WITHOUT_CONSENT')
    expect(await footprint(tenant.id)).toEqual(before)

    // Every recipient listed stays RECIPIENTS_OPTED_OUT, consents or not.
    await listOptOut(app.current, manager, '010-7100-0003')
    expectProblem(await send(app.current, owner, advertisement), 400, 'RECIPIENTS_OPTED_OUT')

    await recordConsents(tenant, ['010-7100-0002'])
    await app.current.inject({ method: 'DELETE', url: '/v1/sms/opt-outs/01071000002', headers: manager.headers })
    const sent = await send(app.current, owner, advertisement)
    expect(sent.statusCode).toBe(201)
    expect(statuses(sent.json())).toEqual([
      ['Kim', 'OPTED_OUT'],
      ['Lee', 'PENDING'],
      ['Park', 'OPTED_OUT'],
    ])
    expect(sent.json()).toMatchObject({ optedOutCount: 2, noConsentCount: 0 })
  })

  it('answers RECIPIENTS_WITHOUT_CONSENT and creates nothing when no recipient consented', async () => {
    const { tenant, owner } = await advertiser()
    const before = await footprint(tenant.id)
    expectProblem(await send(app.current, owner, advertisement), 400, 'RECIPIENTS_WITHOUT_CONSENT')
    expect(await footprint(tenant.id)).toEqual(before)
  })

  it('lets a consent lapse 730 days after it was confirmed (injected clock), and a withdrawn one at once', async () => {
    const { owner, manager } = await advertiser()
    for (const { phone } of three) expect((await recordConsent(manager, phone)).statusCode).toBe(201)

    app.setTime(new Date(noon.getTime() + 730 * DAY_MS - 1000))
    const lastDay = await send(app.current, owner, advertisement)
    expect(lastDay.statusCode).toBe(201)
    expect(lastDay.json()).toMatchObject({ noConsentCount: 0 })

    expect((await app.current.inject({ method: 'DELETE', url: '/v1/sms/ad-consents/01071000003', headers: manager.headers })).statusCode).toBe(204)
    const withdrawn = await send(app.current, owner, advertisement)
    expect(statuses(withdrawn.json())).toEqual([
      ['Kim', 'PENDING'],
      ['Lee', 'PENDING'],
      ['Park', 'NO_CONSENT'],
    ])

    app.setTime(new Date(noon.getTime() + 730 * DAY_MS))
    expectProblem(await send(app.current, owner, advertisement), 400, 'RECIPIENTS_WITHOUT_CONSENT')
    // Recording it again confirms it anew.
    expect((await recordConsent(manager, '010-7100-0002')).statusCode).toBe(200)
    const renewed = await send(app.current, owner, advertisement)
    expect(statuses(renewed.json())).toEqual([
      ['Kim', 'NO_CONSENT'],
      ['Lee', 'PENDING'],
      ['Park', 'NO_CONSENT'],
    ])
  })

  it('counts NO_CONSENT recipients in the usage report as noConsent (and in recipients)', async () => {
    const { tenant, owner } = await advertiser()
    await recordConsents(tenant, ['010-7100-0001'])
    expect((await send(app.current, owner, advertisement)).statusCode).toBe(201)
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Seoul' }).format(new Date())
    const usage = await app.current.inject({ method: 'GET', url: `/v1/sms/usage?from=${today}&to=${today}`, headers: owner.headers })
    expect(usage.statusCode).toBe(200)
    expect(usage.json().totals).toMatchObject({ messages: 1, recipients: 3, segments: 1, noConsent: 2, optedOut: 0, consentNotices: 0 })
  })

  it('leaves informational messages untouched: every recipient PENDING, consent or not', async () => {
    const { owner } = await advertiser()
    const notice = await send(app.current, owner, { ...advertisement, purpose: 'INFORMATIONAL' })
    expect(notice.statusCode).toBe(201)
    expect(notice.json()).toMatchObject({ noConsentCount: 0, optedOutCount: 0, estimatedSegments: 3 })
    expect(statuses(notice.json())).toEqual([
      ['Kim', 'PENDING'],
      ['Lee', 'PENDING'],
      ['Park', 'PENDING'],
    ])
  })

  describe('consentRequired: false', () => {
    const put = (who: Actor, payload: object) => app.current.inject({ method: 'PUT', url: '/v1/sms/advertising', headers: who.headers, payload })

    it("restores today's behaviour (only the opt-out list applies), and every change of it by the OWNER is audited", async () => {
      const { tenant, owner, manager } = await advertiser()
      await listOptOut(app.current, manager, '010-7100-0003')
      const off = await put(owner, { optOutNumber: '080-123-4567', consentRequired: false })
      expect(off.statusCode).toBe(200)
      expect(off.json()).toEqual({ optOutNumber: '0801234567', consentRequired: false })
      expect((await app.current.inject({ method: 'GET', url: '/v1/sms/advertising', headers: manager.headers })).json()).toEqual({
        optOutNumber: '0801234567',
        consentRequired: false,
      })

      const sent = await send(app.current, owner, advertisement)
      expect(sent.statusCode).toBe(201)
      expect(sent.json()).toMatchObject({ optedOutCount: 1, noConsentCount: 0, estimatedSegments: 2 })
      expect(statuses(sent.json())).toEqual([
        ['Kim', 'PENDING'],
        ['Lee', 'PENDING'],
        ['Park', 'OPTED_OUT'],
      ])

      // The same value again writes no event; turning it back on does.
      await put(owner, { optOutNumber: '080-123-4567', consentRequired: false })
      await put(owner, { optOutNumber: '080-123-4567', consentRequired: true })
      expectProblem(await send(app.current, owner, advertisement), 400, 'RECIPIENTS_WITHOUT_CONSENT')
      const events = await storedAuditEvents(tenant, 'ADVERTISING_SETTINGS_CHANGED')
      expect(events.map((event) => [event.actorId, event.details])).toEqual([
        [owner.user.id, { optOutNumber: '080-****-4567' }],
        [owner.user.id, { consentRequired: false }],
        [owner.user.id, { consentRequired: true }],
      ])
    })

    it('is for the OWNER only: a manager gets AUTH_008 and consent stays required', async () => {
      const { owner, manager } = await advertiser()
      expectProblem(await put(manager, { optOutNumber: '080-123-4567', consentRequired: false }), 403, 'AUTH_008')
      expect((await app.current.inject({ method: 'GET', url: '/v1/sms/advertising', headers: owner.headers })).json()).toMatchObject({
        consentRequired: true,
      })
      expectProblem(await put(owner, { optOutNumber: '080-123-4567', consentRequired: 'no' }), 400, 'VALIDATION_FAILED')
    })
  })
})
