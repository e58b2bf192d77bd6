import { describe, expect, it } from 'vitest'
import { storedAuditEvents } from '../audit/audit-fixtures.js'
import { expectProblem } from '../sms/sms-fixtures.js'
import { createClass, enrol, messageRows, newKey, post, recipientRows, send } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'
import { carrierBytes, footprint, framedText, renameTenant, seoul, useAppAt } from './advertisement-send-fixtures.js'
import { listOptOut, OPT_OUT_DIGITS, recordConsents, setOptOutNumber } from './advertising-fixtures.js'
import { owner as ownerDb } from '../support/fixtures.js'

const SMS_LIMIT = 90
const LMS_LIMIT = 2000

/** Content of exactly `bytes` carrier bytes, Hangul (2 bytes a syllable) and ASCII mixed. */
function contentOfBytes(bytes: number): string {
  const hangul = '겨울 특강 '
  return hangul + 'a'.repeat(bytes - carrierBytes(hangul))
}

const twoRecipients = [
  { phone: '010-2000-0001', name: 'Kim' },
  { phone: '010-2000-0002', name: 'Lee' },
]

/** Every number this file advertises to: each has consented (advertisement-consent.test.ts covers those without). */
const CONSENTING = ['010-2000-0001', '010-2000-0002', '010-2000-0003', '010-3000-0001', '010-3000-0002', '010-3000-0003', '010-1234-5678']

describe('POST /v1/sms/send with purpose ADVERTISEMENT: the frame, the price and the opt-out number', () => {
  // Noon in Seoul: the quiet hours (advertisement-quiet-hours.test.ts) never interfere here, whenever the suite runs.
  const app = useAppAt(seoul('2026-03-10T12:00:00'))
  const prices = () => ({ sms: app.current.env.SVC_SMS_PRICE_SMS, lms: app.current.env.SVC_SMS_PRICE_LMS })

  /** An academy whose OWNER has set the opt-out number, and whose staff recorded the consents of this file's numbers. */
  async function advertiser() {
    const staff = await academy(app.current)
    await setOptOutNumber(app.current, staff.owner)
    await recordConsents(staff.tenant, CONSENTING)
    return staff
  }

  describe('the frame counts in the size, the type and the price', () => {
    it('prices as LMS an advertisement whose content is SMS but whose framed text passes 90 bytes, while the same notice stays SMS', async () => {
      const { tenant, owner } = await advertiser()
      const frameBytes = carrierBytes(framedText(tenant.name, ''))
      const content = contentOfBytes(SMS_LIMIT + 1 - frameBytes)
      expect(carrierBytes(content)).toBeLessThanOrEqual(SMS_LIMIT)
      expect(carrierBytes(framedText(tenant.name, content))).toBe(SMS_LIMIT + 1)

      const notice = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content })
      expect(notice.statusCode).toBe(201)
      expect(notice.json()).toMatchObject({
        purpose: 'INFORMATIONAL',
        messageType: 'SMS',
        estimatedSegments: 2,
        unitPrice: prices().sms,
        totalPrice: 2 * prices().sms,
        optedOutCount: 0,
      })

      const advertisement = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content, purpose: 'ADVERTISEMENT' })
      expect(advertisement.statusCode).toBe(201)
      expect(advertisement.json()).toMatchObject({
        purpose: 'ADVERTISEMENT',
        messageType: 'LMS',
        estimatedSegments: 2,
        unitPrice: prices().lms,
        totalPrice: 2 * prices().lms,
        optedOutCount: 0,
        recipientCount: 2,
      })
      const stored = (await messageRows(tenant)).find((row) => row.id === advertisement.json().id)
      expect(stored).toMatchObject({ messageType: 'LMS', unitPrice: prices().lms, totalPrice: 2 * prices().lms })

      // One byte less and the framed text is exactly 90 bytes: still SMS.
      const shorter = contentOfBytes(SMS_LIMIT - frameBytes)
      const atLimit = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: shorter, purpose: 'ADVERTISEMENT' })
      expect(atLimit.json()).toMatchObject({ messageType: 'SMS', unitPrice: prices().sms, totalPrice: 2 * prices().sms })
    })

    it('sizes a {name} per recipient inside the frame: the longest framed rendering decides', async () => {
      const { tenant, owner } = await advertiser()
      const content = 'Hi {name}, winter class'
      const withoutName = carrierBytes(framedText(tenant.name, content.replace('{name}', '')))
      // 'Kim' fits an SMS framed; a name one byte longer than the room left does not.
      expect(withoutName + carrierBytes('Kim')).toBeLessThanOrEqual(SMS_LIMIT)
      const longName = 'K'.repeat(SMS_LIMIT + 1 - withoutName)

      const short = await send(app.current, owner, { recipients: [{ phone: '010-2000-0001', name: 'Kim' }], title: 'T', content, purpose: 'ADVERTISEMENT' })
      expect(short.json()).toMatchObject({ messageType: 'SMS' })
      const long = await send(app.current, owner, {
        recipients: [
          { phone: '010-2000-0001', name: 'Kim' },
          { phone: '010-2000-0002', name: longName },
        ],
        title: 'T',
        content,
        purpose: 'ADVERTISEMENT',
      })
      expect(long.json()).toMatchObject({ messageType: 'LMS', totalPrice: 2 * prices().lms })
    })

    it("matches the documented example: a six-syllable academy name leaves 25 Hangul syllables of an SMS, and 26 make an LMS", async () => {
      const { tenant, owner } = await advertiser()
      await renameTenant(tenant.id, '해법수학학원')
      expect(carrierBytes(framedText('해법수학학원', ''))).toBe(39)
      const syllables = (count: number) => '가'.repeat(count)

      const fits = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: syllables(25), purpose: 'ADVERTISEMENT' })
      expect(fits.json()).toMatchObject({ messageType: 'SMS' })
      const over = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: syllables(26), purpose: 'ADVERTISEMENT' })
      expect(over.json()).toMatchObject({ messageType: 'LMS' })
    })

    it('refuses with CONTENT_TOO_LONG an advertisement under 2,000 bytes as written but over them framed, and creates nothing', async () => {
      const { tenant, owner } = await advertiser()
      const frameBytes = carrierBytes(framedText(tenant.name, ''))
      const content = '가'.repeat(999) + 'a'
      expect(carrierBytes(content)).toBe(LMS_LIMIT - 1)
      const before = await footprint(tenant.id)

      const refused = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content, purpose: 'ADVERTISEMENT' })
      const body = expectProblem(refused, 400, 'CONTENT_TOO_LONG')
      expect(body.detail).toContain(`${LMS_LIMIT - 1 + frameBytes} bytes`)
      expect(await footprint(tenant.id)).toEqual(before)

      // The same text as a notice is an LMS; framed to exactly 2,000 bytes an advertisement is accepted.
      expect((await send(app.current, owner, { recipients: twoRecipients, title: 'T', content })).json()).toMatchObject({ messageType: 'LMS' })
      const atLimit = await send(app.current, owner, {
        recipients: twoRecipients,
        title: 'T',
        content: contentOfBytes(LMS_LIMIT - frameBytes),
        purpose: 'ADVERTISEMENT',
      })
      expect(atLimit.statusCode).toBe(201)
      expect(atLimit.json()).toMatchObject({ messageType: 'LMS', totalPrice: 2 * prices().lms })
    })

    it('makes an LMS of a short advertisement when the academy name has an emoji, and keeps a Hangul name SMS', async () => {
      const { tenant, owner } = await advertiser()
      const content = 'Open class on Saturday'
      await renameTenant(tenant.id, '해법수학학원')
      const hangulName = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content, purpose: 'ADVERTISEMENT' })
      expect(hangulName.json()).toMatchObject({ messageType: 'SMS', unitPrice: prices().sms })

      const emojiName = 'Piano \u{1F3B9} Academy'
      await renameTenant(tenant.id, emojiName)
      expect(carrierBytes(framedText(emojiName, content))).toBeLessThanOrEqual(SMS_LIMIT)
      const advertisement = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content, purpose: 'ADVERTISEMENT' })
      expect(advertisement.json()).toMatchObject({ messageType: 'LMS', unitPrice: prices().lms, totalPrice: 2 * prices().lms })
      const notice = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content })
      expect(notice.json()).toMatchObject({ messageType: 'SMS', unitPrice: prices().sms })
    })

    it('stores and answers the content as sent, without the label or the opt-out line, and keeps the frame of the moment of acceptance', async () => {
      const { tenant, owner } = await advertiser()
      const content = 'Hello {name}, winter class 10% off'
      const sent = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content, purpose: 'ADVERTISEMENT' })
      expect(sent.json().content).toBe(content)
      const [row] = await messageRows(tenant)
      expect(row).toMatchObject({ content, purpose: 'ADVERTISEMENT', adSenderName: tenant.name, adOptOutNumber: OPT_OUT_DIGITS })
      const detail = await app.current.inject({ method: 'GET', url: `/v1/sms/history/${sent.json().id}`, headers: owner.headers })
      expect(detail.json()).toMatchObject({ content, purpose: 'ADVERTISEMENT' })

      await renameTenant(tenant.id, '새이름학원')
      await setOptOutNumber(app.current, owner, '080-999-8888')
      const [after] = await messageRows(tenant)
      expect(after).toMatchObject({ adSenderName: tenant.name, adOptOutNumber: OPT_OUT_DIGITS })
    })

    it('leaves a notice unframed: no frame is stored on it', async () => {
      const { tenant, owner } = await advertiser()
      expect((await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: 'Class is cancelled' })).statusCode).toBe(201)
      const [row] = await messageRows(tenant)
      expect(row).toMatchObject({ purpose: 'INFORMATIONAL', adSenderName: null, adOptOutNumber: null, optedOutCount: 0 })
    })

    it('refuses a purpose it does not know with VALIDATION_FAILED', async () => {
      const { tenant, owner } = await advertiser()
      expectProblem(await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: 'Hi', purpose: 'PROMOTION' }), 400, 'VALIDATION_FAILED')
      expect(await messageRows(tenant)).toEqual([])
    })
  })

  describe('the opt-out number', () => {
    it('refuses with 409 OPT_OUT_NUMBER_REQUIRED while the academy has none, and creates nothing', async () => {
      const { tenant, owner, manager } = await academy(app.current)
      const before = await footprint(tenant.id)
      for (const who of [owner, manager]) {
        expectProblem(await send(app.current, who, { recipients: twoRecipients, title: 'T', content: 'Hi', purpose: 'ADVERTISEMENT' }), 409, 'OPT_OUT_NUMBER_REQUIRED')
      }
      expect(await footprint(tenant.id)).toEqual(before)
      expect(before).toMatchObject({ messages: 0, idempotencyKeys: 0, acceptedEvents: 0 })
      // A notice needs no opt-out number.
      expect((await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: 'Hi' })).statusCode).toBe(201)
    })

    it('refuses again once the OWNER removes the number (PUT null), and creates nothing', async () => {
      const { tenant, owner } = await advertiser()
      expect((await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: 'Hi', purpose: 'ADVERTISEMENT' })).statusCode).toBe(201)
      expect((await setOptOutNumber(app.current, owner, null)).json()).toEqual({ optOutNumber: null, consentRequired: true })
      const before = await footprint(tenant.id)

      expectProblem(await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: 'Hi', purpose: 'ADVERTISEMENT' }), 409, 'OPT_OUT_NUMBER_REQUIRED')
      expect(await footprint(tenant.id)).toEqual(before)
      expect(before).toMatchObject({ messages: 1, idempotencyKeys: 1, acceptedEvents: 1 })
    })

    it('refuses with 409 OPT_OUT_NUMBER_REQUIRED while the stored number is not a free 080 one, and creates nothing', async () => {
      // A number stored before only 080 numbers were taken: printed, it would promise a refusal the guardian pays for.
      const { tenant, owner } = await academy(app.current)
      await ownerDb().insertInto('smsAdvertisingSettings').values({ tenantId: tenant.id, optOutNumber: '01012345678' }).execute()
      const before = await footprint(tenant.id)
      const refused = await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: 'Hi', purpose: 'ADVERTISEMENT' })
      expectProblem(refused, 409, 'OPT_OUT_NUMBER_REQUIRED')
      expect(refused.json().detail).toMatch(/080/)
      expect(await footprint(tenant.id)).toEqual(before)
      // The OWNER still sees what is stored, and an 080 number puts things right.
      expect((await app.current.inject({ method: 'GET', url: '/v1/sms/advertising', headers: owner.headers })).json()).toEqual({ optOutNumber: '01012345678', consentRequired: true })
      await setOptOutNumber(app.current, owner)
      await recordConsents(tenant, CONSENTING)
      expect((await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: 'Hi', purpose: 'ADVERTISEMENT' })).statusCode).toBe(201)
    })
  })

  describe('class sends', () => {
    async function classOfThree() {
      const staff = await advertiser()
      const math = await createClass(staff.tenant, 'Math A')
      await enrol(staff.tenant, math.id, { name: 'Kim', guardianPhone: '010-3000-0001' })
      await enrol(staff.tenant, math.id, { name: 'Lee', guardianPhone: '010-3000-0002' })
      await enrol(staff.tenant, math.id, { name: 'Park', guardianPhone: '010-3000-0003' })
      // Listed in another writing than the enrolment's.
      await listOptOut(app.current, staff.manager, '+82 10 3000 0002')
      return { ...staff, math }
    }

    it("frames an advertisement to a class and leaves out the guardians on the list as OPTED_OUT", async () => {
      const { tenant, manager, math } = await classOfThree()
      const content = contentOfBytes(SMS_LIMIT + 1 - carrierBytes(framedText(tenant.name, '')))
      expect(carrierBytes(content)).toBeLessThanOrEqual(SMS_LIMIT)

      const sent = await post(app.current, `/v1/sms/send/class/${math.id}`, manager, { title: 'T', content, purpose: 'ADVERTISEMENT' })
      expect(sent.statusCode).toBe(201)
      expect(sent.json()).toMatchObject({
        purpose: 'ADVERTISEMENT',
        recipientType: 'GUARDIAN',
        recipientCount: 3,
        optedOutCount: 1,
        messageType: 'LMS',
        estimatedSegments: 2,
        totalPrice: 2 * prices().lms,
        content,
      })
      expect(sent.json().recipients.map((recipient: { name: string; deliveryStatus: string }) => [recipient.name, recipient.deliveryStatus])).toEqual([
        ['Kim', 'PENDING'],
        ['Lee', 'OPTED_OUT'],
        ['Park', 'PENDING'],
      ])
      const stored = await recipientRows(tenant, sent.json().id)
      expect(stored.map((row) => [row.phone, row.deliveryStatus])).toEqual([
        ['01030000001', 'PENDING'],
        ['01030000002', 'OPTED_OUT'],
        ['01030000003', 'PENDING'],
      ])
    })

    it('sends to a class as a notice by default: unframed, every guardian PENDING', async () => {
      const { tenant, manager, math } = await classOfThree()
      const content = contentOfBytes(SMS_LIMIT + 1 - carrierBytes(framedText(tenant.name, '')))
      const sent = await post(app.current, `/v1/sms/send/class/${math.id}`, manager, { title: 'T', content })
      expect(sent.statusCode).toBe(201)
      expect(sent.json()).toMatchObject({ purpose: 'INFORMATIONAL', recipientCount: 3, optedOutCount: 0, messageType: 'SMS', estimatedSegments: 3 })
      const stored = await recipientRows(tenant, sent.json().id)
      expect(stored.map((row) => row.deliveryStatus)).toEqual(['PENDING', 'PENDING', 'PENDING'])
    })
  })

  describe('idempotency and the audit log', () => {
    it('replays an advertisement with the same answer, purpose and optedOutCount included, and records one SMS_ACCEPTED event that carries both', async () => {
      const { tenant, owner } = await advertiser()
      await listOptOut(app.current, owner, '010-2000-0002')
      const payload = {
        recipients: [...twoRecipients, { phone: '010-2000-0003', name: 'Park' }],
        title: 'T',
        content: 'Winter class',
        purpose: 'ADVERTISEMENT',
      }
      const key = newKey()
      const first = await send(app.current, owner, payload, key)
      expect(first.statusCode).toBe(201)
      expect(first.json()).toMatchObject({ purpose: 'ADVERTISEMENT', optedOutCount: 1, recipientCount: 3 })

      const again = await send(app.current, owner, payload, key)
      expect(again.statusCode).toBe(201)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json()).toEqual(first.json())
      expect(await messageRows(tenant)).toHaveLength(1)

      const events = await storedAuditEvents(tenant, 'SMS_ACCEPTED')
      expect(events).toHaveLength(1)
      expect(events[0]!.targetId).toBe(String(first.json().id))
      expect(events[0]!.details).toMatchObject({ purpose: 'ADVERTISEMENT', optedOutCount: 1, recipientCount: 3, messageType: first.json().messageType })
    })

    it("records a notice's purpose and an optedOutCount of 0 in its SMS_ACCEPTED event", async () => {
      const { tenant, owner } = await advertiser()
      await listOptOut(app.current, owner, '010-2000-0002')
      expect((await send(app.current, owner, { recipients: twoRecipients, title: 'T', content: 'Hi' })).statusCode).toBe(201)
      const [event] = await storedAuditEvents(tenant, 'SMS_ACCEPTED')
      expect(event!.details).toMatchObject({ purpose: 'INFORMATIONAL', optedOutCount: 0, recipientCount: 2 })
    })
  })
})
