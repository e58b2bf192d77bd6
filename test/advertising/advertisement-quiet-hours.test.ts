import { describe, expect, it } from 'vitest'
import { expectProblem } from '../sms/sms-fixtures.js'
import { messageRows, newKey, send } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'
import { recordConsents, setOptOutNumber } from './advertising-fixtures.js'
import { footprint, seoul, seoulDate, useAppAt } from './advertisement-send-fixtures.js'

const advertisement = (extra: Record<string, unknown> = {}) => ({
  recipients: [
    { phone: '010-4000-0001', name: 'Kim' },
    { phone: '010-4000-0002', name: 'Lee' },
  ],
  title: 'Winter class',
  content: 'Winter class starts Monday',
  purpose: 'ADVERTISEMENT',
  ...extra,
})

/** The ISO instant (UTC, as the detail writes it) of a Seoul wall-clock time. */
const seoulIso = (wallClock: string) => seoul(wallClock).toISOString()

describe('advertisements and the quiet hours (21:00 to before 08:00 in SVC_TIME_ZONE)', () => {
  // SVC_TIME_ZONE defaults to Asia/Seoul. Each test sets the app's clock before it sends.
  const app = useAppAt(seoul('2026-03-10T12:00:00'))
  const utcApp = useAppAt(new Date('2026-03-10T12:00:00Z'), { SVC_TIME_ZONE: 'UTC' })

  async function advertiser(service = app.current) {
    const staff = await academy(service)
    await setOptOutNumber(service, staff.owner)
    await recordConsents(staff.tenant, ['010-4000-0001', '010-4000-0002'])
    return staff
  }

  /** Asserts the refusal, the next allowed time it names, and that the academy has nothing more than before. */
  async function expectRefused(attempt: () => Promise<Parameters<typeof expectProblem>[0]>, tenantId: number, nextAllowed: string) {
    const before = await footprint(tenantId)
    const body = expectProblem(await attempt(), 400, 'ADVERTISEMENT_QUIET_HOURS')
    expect(body.detail).toMatch(new RegExp(`the next allowed time is ${nextAllowed.replace(/\./g, '\\.')}\\.$`))
    expect(await footprint(tenantId)).toEqual(before)
  }

  describe('sent now, judged by the app clock', () => {
    it.each(['2026-03-10T20:59:59', '2026-03-11T08:00:00', '2026-03-10T12:00:00'])('accepts an advertisement at %s in Seoul', async (wallClock) => {
      app.setTime(seoul(wallClock))
      const { owner } = await advertiser()
      const sent = await send(app.current, owner, advertisement())
      expect(sent.statusCode).toBe(201)
      expect(sent.json()).toMatchObject({ purpose: 'ADVERTISEMENT', status: 'PENDING', scheduledAt: null })
    })

    it.each([
      ['2026-03-10T21:00:00', '2026-03-11T08:00:00'],
      ['2026-03-10T23:59:59', '2026-03-11T08:00:00'],
      ['2026-03-11T00:00:00', '2026-03-11T08:00:00'],
      ['2026-03-11T07:59:59', '2026-03-11T08:00:00'],
      ['2026-12-31T21:00:00', '2027-01-01T08:00:00'],
    ])('refuses an advertisement at %s in Seoul, naming %s Seoul time, and creates nothing', async (wallClock, nextAllowed) => {
      app.setTime(seoul(wallClock))
      const { tenant, owner } = await advertiser()
      await expectRefused(() => send(app.current, owner, advertisement()), tenant.id, seoulIso(nextAllowed))
    })

    it('accepts a notice at 23:00, sent now or scheduled for 23:00', async () => {
      app.setTime(seoul('2026-03-10T23:00:00'))
      const { tenant, owner } = await advertiser()
      const now = await send(app.current, owner, advertisement({ purpose: 'INFORMATIONAL' }))
      expect(now.statusCode).toBe(201)
      const scheduled = await send(app.current, owner, advertisement({ purpose: 'INFORMATIONAL', scheduledAt: seoulIso(`${seoulDate(2)}T23:00:00`) }))
      expect(scheduled.statusCode).toBe(201)
      expect(await messageRows(tenant)).toHaveLength(2)
    })

    it('replays at 21:00 an advertisement accepted at 20:59:59 with the same key', async () => {
      app.setTime(seoul('2026-03-10T20:59:59'))
      const { tenant, owner } = await advertiser()
      const key = newKey()
      const first = await send(app.current, owner, advertisement(), key)
      expect(first.statusCode).toBe(201)

      app.setTime(seoul('2026-03-10T21:00:00'))
      const again = await send(app.current, owner, advertisement(), key)
      expect(again.statusCode).toBe(201)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json().id).toBe(first.json().id)
      expect(await messageRows(tenant)).toHaveLength(1)
    })
  })

  describe('scheduled, judged by scheduledAt', () => {
    // scheduledAt must lie ahead of the real clock, so the days are counted from today in Seoul.
    const day = seoulDate(2)
    const nextDay = seoulDate(3)

    it.each([`${day}T20:59:00`, `${day}T08:00:00`])('accepts an advertisement scheduled at %s in Seoul', async (wallClock) => {
      app.setTime(seoul('2026-03-10T12:00:00'))
      const { owner } = await advertiser()
      const sent = await send(app.current, owner, advertisement({ scheduledAt: seoulIso(wallClock) }))
      expect(sent.statusCode).toBe(201)
      expect(sent.json().scheduledAt).toBe(seoulIso(wallClock))
    })

    it.each([
      [`${day}T21:00:00`, `${nextDay}T08:00:00`],
      [`${nextDay}T07:59:00`, `${nextDay}T08:00:00`],
    ])('refuses in the day an advertisement scheduled at %s in Seoul, naming %s, and creates nothing', async (wallClock, nextAllowed) => {
      app.setTime(seoul('2026-03-10T12:00:00'))
      const { tenant, owner } = await advertiser()
      await expectRefused(() => send(app.current, owner, advertisement({ scheduledAt: seoulIso(wallClock) })), tenant.id, seoulIso(nextAllowed))
    })

    it('accepts at night an advertisement scheduled for the next morning', async () => {
      app.setTime(seoul('2026-03-10T22:30:00'))
      const { owner } = await advertiser()
      const sent = await send(app.current, owner, advertisement({ scheduledAt: seoulIso(`${day}T09:00:00`) }))
      expect(sent.statusCode).toBe(201)
    })
  })

  describe('in another SVC_TIME_ZONE', () => {
    it('refuses an advertisement at 21:00 UTC in an app on UTC, naming 08:00 UTC the next day', async () => {
      utcApp.setTime(new Date('2026-03-10T21:00:00Z'))
      const { tenant, owner } = await advertiser(utcApp.current)
      await expectRefused(() => send(utcApp.current, owner, advertisement()), tenant.id, '2026-03-11T08:00:00.000Z')
    })

    it('accepts one at 12:00 UTC, which is 21:00 in Seoul, and at 20:59:59 UTC, which is 05:59:59 in Seoul', async () => {
      const { owner } = await advertiser(utcApp.current)
      for (const at of ['2026-03-10T12:00:00Z', '2026-03-10T20:59:59Z']) {
        utcApp.setTime(new Date(at))
        expect((await send(utcApp.current, owner, advertisement())).statusCode, at).toBe(201)
      }
    })
  })
})
