import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { owner as ownerDb } from '../support/fixtures.js'
import { buildTestApp } from '../support/helper.js'
import { insertMessageRow, problem, recipientRows } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

// An advertisement that falls due in the quiet hours waits until 08:00 (lib/advertising/quiet-hours.ts): held like a
// suspended tenant's message, so its sender can take it back meanwhile, whatever its scheduled time, as long as
// the provider never had it. By day the same message is due and goes out: not cancellable.
describe('POST /v1/sms/history/{id}/cancel of an advertisement held by the quiet hours', () => {
  // 23:00 and 10:00 in Asia/Seoul (UTC+9), the default SVC_TIME_ZONE.
  let night: FastifyInstance
  let day: FastifyInstance
  beforeAll(async () => {
    ;[night, day] = await Promise.all([
      buildTestApp({}, () => new Date('2026-11-28T14:00:00Z')),
      buildTestApp({}, () => new Date('2026-11-29T01:00:00Z')),
    ])
  })
  afterAll(async () => {
    await Promise.all([night?.close(), day?.close()])
  })

  const cancel = (app: FastifyInstance, who: Actor, id: number) =>
    app.inject({ method: 'POST', url: `/v1/sms/history/${id}/cancel`, headers: who.headers })
  const statusOf = async (id: number) =>
    (await ownerDb().selectFrom('smsMessages').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status

  /**
   * An advertisement whose scheduled time has passed, as the dispatcher leaves it at night: PENDING, never tried.
   * Its next attempt is a year away, so no dispatcher of another file could move it (the rule does not look at it).
   */
  async function waitingAdvertisement(sender: Actor, fixture: { dispatchAttempts?: number; purpose?: 'ADVERTISEMENT' | 'INFORMATIONAL' } = {}) {
    const id = await insertMessageRow(sender, { scheduledAt: new Date(Date.now() + 3_600_000) })
    const purpose = fixture.purpose ?? 'ADVERTISEMENT'
    await ownerDb()
      .updateTable('smsMessages')
      .set({
        purpose,
        adSenderName: purpose === 'ADVERTISEMENT' ? 'Academy' : null,
        adOptOutNumber: purpose === 'ADVERTISEMENT' ? '0801234567' : null,
        scheduledAt: new Date(Date.now() - 60_000),
        nextAttemptAt: new Date(Date.now() + 365 * 86_400_000),
        dispatchAttempts: fixture.dispatchAttempts ?? 0,
      })
      .where('id', '=', id)
      .execute()
    return id
  }

  it('cancels it at night: 200, CANCELLED, its recipients CANCELLED', async () => {
    const { tenant, instructor } = await academy(night)
    const id = await waitingAdvertisement(instructor)
    const response = await cancel(night, instructor, id)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ id, status: 'CANCELLED', purpose: 'ADVERTISEMENT' })
    expect((await recipientRows(tenant, id)).map((row) => row.deliveryStatus)).toEqual(['CANCELLED'])
  })

  it('answers SMS_NOT_CANCELLABLE by day, when it is due and goes out', async () => {
    const { instructor } = await academy(day)
    const id = await waitingAdvertisement(instructor)
    expect(problem(await cancel(day, instructor, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
    expect(await statusOf(id)).toBe('PENDING')
  })

  it('answers SMS_NOT_CANCELLABLE at night for an informational message, which the quiet hours do not hold', async () => {
    const { instructor } = await academy(night)
    const id = await waitingAdvertisement(instructor, { purpose: 'INFORMATIONAL' })
    expect(problem(await cancel(night, instructor, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
    expect(await statusOf(id)).toBe('PENDING')
  })

  it('answers SMS_NOT_CANCELLABLE at night for an advertisement the provider already had (a retry waiting for 08:00)', async () => {
    const { instructor } = await academy(night)
    const id = await waitingAdvertisement(instructor, { dispatchAttempts: 1 })
    expect(problem(await cancel(night, instructor, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
    expect(await statusOf(id)).toBe('PENDING')
  })
})
