import { afterEach, describe, expect, it } from 'vitest'
import { claimDueMessages } from '../../db/repos/dispatch/dispatch.js'
import type { TenantStatus } from '../../db/schema.js'
import type { Clock } from '../../lib/clock.js'
import { insertPendingMessage, insertTenantAndSender, messageState, type MessageSpec } from '../support/dispatch-fixtures.js'
import { useDispatchTestBed } from '../dispatch/dispatch-test-bed.js'
import { recordConsents } from './advertising-fixtures.js'

// The dispatcher's side of the advertising quiet hours (21:00 to before 08:00 in SVC_TIME_ZONE, default Asia/Seoul):
// an advertisement is neither claimed nor handed over in them, and a retry that would fall in them waits for 08:00.
// Every time of day comes from the dispatcher's clock, never from waiting. Due-ness is still the database's now(),
// so the fixed clocks are days ahead of it: a retry they schedule is never due for a later pass of this file.

/** An instant given as Seoul wall-clock time (UTC+9, no daylight saving). */
const kst = (wallClock: string) => new Date(`${wallClock}+09:00`)
const at = (wallClock: string): Clock => () => kst(wallClock)

const EVENING = '2027-03-15T20:59:30'
const NIGHT = ['2027-03-15T21:00:00', '2027-03-15T23:00:00', '2027-03-16T07:59:59.999']
const MORNING = '2027-03-16T08:00:00'
const NOON = '2027-03-16T12:00:00'

describe('dispatch of advertisements in the quiet hours', () => {
  const bed = useDispatchTestBed(4)
  const { dispatcher, sentFor } = bed
  const setTenant = (tenantId: number, status: TenantStatus) =>
    bed.iso.owner.updateTable('tenants').set({ status }).where('id', '=', tenantId).execute()
  // The claim spans every tenant: whatever a test leaves waiting (a retry, or an advertisement a failed assertion
  // left unsent) must not be due for the next test's pass, whose claim counts it checks.
  afterEach(async () => {
    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date('2099-01-01T00:00:00Z') }).where('status', '=', 'PENDING').execute()
  })

  /**
   * A due advertisement as an accepted send leaves it: the frame it was accepted with is on the row (a CHECK), and
   * its recipients consented.
   */
  async function insertAdvertisement(spec: MessageSpec): Promise<number> {
    const smsId = await insertPendingMessage(bed.iso.owner, spec)
    const phones = (spec.recipients ?? [{ phone: '01012345678' }, { phone: '01098765432' }]).map((recipient) => recipient.phone)
    await recordConsents({ id: spec.tenantId }, phones, { db: bed.iso.owner })
    await bed.iso.owner
      .updateTable('smsMessages')
      .set({ purpose: 'ADVERTISEMENT', adSenderName: '해오름학원', adOptOutNumber: '0801234567' })
      .where('id', '=', smsId)
      .execute()
    return smsId
  }

  const untouched = { status: 'PENDING', dispatchAttempts: 0, claimToken: null }

  it('neither claims nor sends a due advertisement at 21:00, 23:00 or 07:59:59.999, while a notice due with it goes out', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const adId = await insertAdvertisement(tenant)
    expect(await dispatcher({ clock: at(NIGHT[0]!) }).runOnce()).toBe(0)
    expect(sentFor(adId)).toEqual([])
    expect(await messageState(bed.iso.owner, adId)).toMatchObject(untouched)

    for (const night of NIGHT) {
      const noticeId = await insertPendingMessage(bed.iso.owner, tenant)
      expect(await dispatcher({ clock: at(night) }).runOnce()).toBe(1)
      expect(sentFor(noticeId)).toHaveLength(2)
      expect((await messageState(bed.iso.owner, noticeId)).status).toBe('DISPATCHED')
      expect(sentFor(adId)).toEqual([])
      expect(await messageState(bed.iso.owner, adId)).toMatchObject(untouched)
    }

    expect(await dispatcher({ clock: at(MORNING) }).runOnce()).toBe(1)
    expect(sentFor(adId).map((message) => message.to)).toEqual(['01012345678', '01098765432'])
    expect(await messageState(bed.iso.owner, adId)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, claimToken: null })
  })

  it('judges the hours in its own time zone, not in Seoul', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const adId = await insertAdvertisement(tenant)
    // 11:00 in Seoul is 02:00 UTC: night for a dispatcher on UTC.
    expect(await dispatcher({ clock: at('2027-03-16T11:00:00'), timeZone: 'UTC' }).runOnce()).toBe(0)
    expect(await messageState(bed.iso.owner, adId)).toMatchObject(untouched)
    // 21:00 in Seoul is noon UTC.
    expect(await dispatcher({ clock: at(NIGHT[0]!), timeZone: 'UTC' }).runOnce()).toBe(1)
    expect(sentFor(adId)).toHaveLength(2)
  })

  it('schedules an advertisement whose retry falls at 21:00 for 08:00 the next morning, and a notice at its backoff', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const adId = await insertAdvertisement(tenant)
    const noticeId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ status: 503 })
    // 20:59:30 plus a 30 s backoff (and up to 20 % jitter) is 21:00:00 to 21:00:06.
    const evening = at(EVENING)
    expect(await dispatcher({ clock: evening, retryBaseSeconds: 30 }).runOnce()).toBe(2)

    const ad = await messageState(bed.iso.owner, adId)
    expect(ad).toMatchObject({ status: 'PENDING', dispatchAttempts: 1, claimToken: null })
    expect(ad.nextAttemptAt.toISOString()).toBe(kst(MORNING).toISOString())
    expect(ad.lastProviderError).not.toBeNull()

    const notice = await messageState(bed.iso.owner, noticeId)
    expect(notice).toMatchObject({ status: 'PENDING', dispatchAttempts: 1, claimToken: null })
    const backoffMs = notice.nextAttemptAt.getTime() - evening().getTime()
    expect(backoffMs).toBeGreaterThanOrEqual(30_000)
    expect(backoffMs).toBeLessThanOrEqual(36_000)
  })

  it("keeps an advertisement's plain backoff when its retry falls before 21:00", async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const adId = await insertAdvertisement(tenant)
    bed.fake.fail({ status: 503 })
    const early = at('2027-03-15T20:58:00')
    expect(await dispatcher({ clock: early, retryBaseSeconds: 30 }).runOnce()).toBe(1)
    const backoffMs = (await messageState(bed.iso.owner, adId)).nextAttemptAt.getTime() - early().getTime()
    expect(backoffMs).toBeGreaterThanOrEqual(30_000)
    expect(backoffMs).toBeLessThanOrEqual(36_000)
  })

  it('does not send an advertisement held by a suspension and released at 23:00 before 08:00', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const adId = await insertAdvertisement(tenant)
    await setTenant(tenant.tenantId, 'SUSPENDED')
    expect(await dispatcher({ clock: at(NOON) }).runOnce()).toBe(0)
    expect(await messageState(bed.iso.owner, adId)).toMatchObject(untouched)

    await setTenant(tenant.tenantId, 'ACTIVE')
    expect(await dispatcher({ clock: at('2027-03-15T23:00:00') }).runOnce()).toBe(0)
    expect(sentFor(adId)).toEqual([])
    expect(await messageState(bed.iso.owner, adId)).toMatchObject(untouched)

    expect(await dispatcher({ clock: at(MORNING) }).runOnce()).toBe(1)
    expect(sentFor(adId)).toHaveLength(2)
    expect(await messageState(bed.iso.owner, adId)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1 })
  })

  it('gives back untouched an advertisement claimed before 21:00 and handed over after', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const adId = await insertAdvertisement(tenant)
    // A claim that does not say advertising is open (an instance of an earlier release) never takes it.
    expect(await claimDueMessages(bed.database.db, 10, 30)).toEqual([])

    const claims = await claimDueMessages(bed.database.db, 10, 30, null, true)
    expect(claims.map((claim) => claim.smsId)).toEqual([adId])
    await dispatcher({ clock: at(NIGHT[0]!) }).processClaim(claims[0]!)
    expect(sentFor(adId)).toEqual([])
    expect(await messageState(bed.iso.owner, adId)).toMatchObject(untouched)

    // Released, not left to its lease: the morning's first pass takes it.
    expect(await dispatcher({ clock: at(MORNING) }).runOnce()).toBe(1)
    expect(sentFor(adId)).toHaveLength(2)
  })
})
