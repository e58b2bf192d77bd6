import { describe, expect, it } from 'vitest'
import { expectProblem } from '../sms/sms-fixtures.js'
import { keyRows, messageRows, newKey, recipientRows, send } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'
import { listOptOut, recordConsents, setOptOutNumber } from './advertising-fixtures.js'
import { footprint, quotaCounted, seoul, useAppAt } from './advertisement-send-fixtures.js'

const LISTED = '01050000001'
// The listed number as people write it, none of them the writing it was listed in.
const WRITINGS = ['010-5000-0001', '+82 10 5000 0001', '(010) 5000-0001', '010.5000.0001', '010 5000 0001']
const OTHER = { phone: '010-5000-0099', name: 'Other' }
// Every number this file advertises to has consented: a listed number is OPTED_OUT whatever its consent.
const CONSENTING = [LISTED, '010-5000-0002', '010-5000-0098', '010-5000-0099', ...['1', '2', '3', '4', '5', '6'].map((n) => `010-5100-000${n}`)]

type AnsweredRecipient = { phone: string; name: string; deliveryStatus: string }
const statuses = (body: { recipients: AnsweredRecipient[] }) => body.recipients.map((recipient) => [recipient.name, recipient.deliveryStatus])

describe("advertisements and the academy's opt-out list", () => {
  // Noon in Seoul: never in the quiet hours, whenever the suite runs.
  const noon = seoul('2026-03-10T12:00:00')
  const app = useAppAt(noon)
  const prices = () => ({ sms: app.current.env.SVC_SMS_PRICE_SMS, lms: app.current.env.SVC_SMS_PRICE_LMS })

  async function advertiser(service = app.current) {
    const staff = await academy(service)
    await setOptOutNumber(service, staff.owner)
    await recordConsents(staff.tenant, CONSENTING)
    return staff
  }

  describe('matching a number whatever its writing', () => {
    it.each(WRITINGS)('leaves out %s as OPTED_OUT, in the answer and the database, and prices only the others', async (writing) => {
      const { tenant, owner, manager } = await advertiser()
      await listOptOut(app.current, manager, LISTED)
      const sent = await send(app.current, owner, {
        recipients: [{ phone: writing, name: 'Listed' }, OTHER],
        title: 'T',
        content: 'Winter class',
        purpose: 'ADVERTISEMENT',
      })
      expect(sent.statusCode).toBe(201)
      expect(sent.json()).toMatchObject({
        recipientCount: 2,
        optedOutCount: 1,
        messageType: 'SMS',
        estimatedSegments: 1,
        unitPrice: prices().sms,
        totalPrice: prices().sms,
      })
      expect(statuses(sent.json())).toEqual([
        ['Listed', 'OPTED_OUT'],
        ['Other', 'PENDING'],
      ])
      const stored = await recipientRows(tenant, sent.json().id)
      expect(stored.map((row) => [row.phone, row.deliveryStatus])).toEqual([
        [LISTED, 'OPTED_OUT'],
        ['01050000099', 'PENDING'],
      ])
      const [message] = await messageRows(tenant)
      expect(message).toMatchObject({ recipientCount: 2, optedOutCount: 1, estimatedSegments: 1, totalPrice: prices().sms })
    })

    it('leaves out every writing in one send, where different names keep them apart as recipients', async () => {
      const { tenant, owner } = await advertiser()
      await listOptOut(app.current, owner, LISTED)
      expect(WRITINGS.length).toBeLessThanOrEqual(app.current.env.SVC_SMS_MAX_PER_PHONE)
      const sent = await send(app.current, owner, {
        recipients: [...WRITINGS.map((phone, index) => ({ phone, name: `Sibling ${index}` })), OTHER],
        title: 'T',
        content: 'Dear guardian of {name}',
        purpose: 'ADVERTISEMENT',
      })
      expect(sent.statusCode).toBe(201)
      expect(sent.json()).toMatchObject({ recipientCount: 6, optedOutCount: 5, estimatedSegments: 1, totalPrice: prices().sms })
      const stored = await recipientRows(tenant, sent.json().id)
      expect(stored.map((row) => row.deliveryStatus)).toEqual([...WRITINGS.map(() => 'OPTED_OUT'), 'PENDING'])
    })

    it('prices as LMS only the recipients it sends to', async () => {
      const { owner } = await advertiser()
      await listOptOut(app.current, owner, LISTED)
      const long = 'Winter class. '.repeat(8)
      const sent = await send(app.current, owner, {
        recipients: [{ phone: LISTED, name: 'Listed' }, OTHER, { phone: '010-5000-0098', name: 'Third' }],
        title: 'T',
        content: long,
        purpose: 'ADVERTISEMENT',
      })
      expect(sent.json()).toMatchObject({
        recipientCount: 3,
        optedOutCount: 1,
        messageType: 'LMS',
        estimatedSegments: 2,
        unitPrice: prices().lms,
        totalPrice: 2 * prices().lms,
      })
    })
  })

  it("never applies another academy's list: the number stays PENDING in an advertisement of an academy that did not list it", async () => {
    const a = await advertiser()
    const b = await advertiser()
    await listOptOut(app.current, b.owner, LISTED)

    const sentByA = await send(app.current, a.owner, { recipients: [{ phone: LISTED, name: 'Kim' }], title: 'T', content: 'Hi', purpose: 'ADVERTISEMENT' })
    expect(sentByA.statusCode).toBe(201)
    expect(sentByA.json()).toMatchObject({ optedOutCount: 0, estimatedSegments: 1 })
    expect(statuses(sentByA.json())).toEqual([['Kim', 'PENDING']])
    expect((await recipientRows(a.tenant, sentByA.json().id)).map((row) => row.deliveryStatus)).toEqual(['PENDING'])

    // In B, whose list it is on, the same advertisement reaches nobody.
    expectProblem(await send(app.current, b.owner, { recipients: [{ phone: LISTED, name: 'Kim' }], title: 'T', content: 'Hi', purpose: 'ADVERTISEMENT' }), 400, 'RECIPIENTS_OPTED_OUT')
  })

  describe('every recipient listed', () => {
    it('refuses with RECIPIENTS_OPTED_OUT and creates nothing: no message, recipient, key, event or quota', async () => {
      const { tenant, owner } = await advertiser()
      await listOptOut(app.current, owner, '010-5000-0001')
      await listOptOut(app.current, owner, '010-5000-0002')
      // An earlier send, so the academy has a quota counter and an event that must stay as they are.
      expect((await send(app.current, owner, { recipients: [OTHER], title: 'T', content: 'Earlier' })).statusCode).toBe(201)
      const before = await footprint(tenant.id)
      expect(before).toMatchObject({ messages: 1, quota: 1, acceptedEvents: 1 })

      const payload = {
        recipients: [
          { phone: '+82 10 5000 0001', name: 'Kim' },
          { phone: '010.5000.0002', name: 'Lee' },
        ],
        title: 'T',
        content: 'Winter class',
      }
      const key = newKey()
      expectProblem(await send(app.current, owner, { ...payload, purpose: 'ADVERTISEMENT' }, key), 400, 'RECIPIENTS_OPTED_OUT')
      expect(await footprint(tenant.id)).toEqual(before)

      // The same send as a notice reaches both; the refused key was never stored, so it serves this other body.
      const notice = await send(app.current, owner, { ...payload, purpose: 'INFORMATIONAL' }, key)
      expect(notice.statusCode).toBe(201)
      expect(notice.json()).toMatchObject({ purpose: 'INFORMATIONAL', optedOutCount: 0, recipientCount: 2, estimatedSegments: 2 })
      expect(statuses(notice.json())).toEqual([
        ['Kim', 'PENDING'],
        ['Lee', 'PENDING'],
      ])
      expect((await recipientRows(tenant, notice.json().id)).map((row) => row.deliveryStatus)).toEqual(['PENDING', 'PENDING'])
      expect(await keyRows(tenant)).toHaveLength(2)
      expect(await quotaCounted(tenant.id)).toBe(3)
    })
  })

  describe('the daily quota', () => {
    const quotaApp = useAppAt(noon, { SVC_SMS_TENANT_DAILY_RECIPIENTS: '3' })

    it('counts only the recipients it sends to: 5 with 2 listed fill a quota of 3, and the next recipient is refused', async () => {
      const { tenant, owner } = await advertiser(quotaApp.current)
      await listOptOut(quotaApp.current, owner, '010-5100-0001')
      await listOptOut(quotaApp.current, owner, '010-5100-0002')
      const five = ['010-5100-0001', '010-5100-0002', '010-5100-0003', '010-5100-0004', '010-5100-0005']

      const sent = await send(quotaApp.current, owner, {
        recipients: five.map((phone, index) => ({ phone, name: `R${index}` })),
        title: 'T',
        content: 'Winter class',
        purpose: 'ADVERTISEMENT',
      })
      expect(sent.statusCode).toBe(201)
      expect(sent.json()).toMatchObject({ recipientCount: 5, optedOutCount: 2, estimatedSegments: 3 })
      expect(await quotaCounted(tenant.id)).toBe(3)

      const refused = await send(quotaApp.current, owner, { recipients: [{ phone: '010-5100-0006' }], title: 'T', content: 'Hi' })
      expectProblem(refused, 429, 'SMS_QUOTA_EXCEEDED')
      expect(await quotaCounted(tenant.id)).toBe(3)
      expect(await messageRows(tenant)).toHaveLength(1)
    })
  })
})
