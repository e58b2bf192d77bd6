import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import {
  completedMessage,
  deliveries,
  eventRow,
  eventRows,
  isolatedAcademy,
  makeDue,
  metric,
  putEndpoint,
  startReceiver,
  verified,
  type Receiver,
} from './delivery-bed.js'

/** The documented retry delays (docs/api.md#events), in seconds after each failed attempt: 8 attempts in all. */
const DOCUMENTED_DELAYS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000]

// An event whose receiver always fails is tried 8 times on the documented schedule, then given up: logged, counted,
// never claimed again. Each retry is made due in the database instead of waiting for it. The app's every log line is
// captured, to find the give-up line and to prove no line carries the signing secret.
describe('webhook delivery to a receiver that always fails', () => {
  let iso: IsolatedDatabase
  let receiver: Receiver
  const lines: string[] = []

  beforeAll(async () => {
    iso = await isolatedDatabase()
    receiver = await startReceiver([500])
  })
  // After hooks run in reverse: the app closes before its receiver and its database go.
  afterAll(async () => {
    await receiver?.close()
    await iso?.drop()
  })
  const service = useTestApp(() => ({
    env: { DATABASE_URL: iso.url, SVC_SMS_DISPATCHER: 'off', SVC_WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'trace' },
    onLine: (line) => lines.push(line),
  }))

  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then gives up after the 8th attempt, logged and counted', async () => {
    const academy = await isolatedAcademy(service.current, iso.owner)
    const secret = await putEndpoint(service.current, academy, receiver.url)
    await completedMessage(service.current, iso.owner, academy)
    const [created] = await eventRows(iso.owner, academy.tenantId)
    const eventId = created!.id
    const failedBefore = await metric(service.current, deliveries('failed'))
    const givenUpBefore = await metric(service.current, deliveries('given_up'))

    for (const [index, delay] of DOCUMENTED_DELAYS.entries()) {
      if (index > 0) await makeDue(iso.owner, eventId)
      const started = Date.now()
      expect(await service.current.webhooks.deliverer.runOnce()).toBe(1)
      const ended = Date.now()
      const row = await eventRow(iso.owner, eventId)
      expect(row).toMatchObject({ attempts: index + 1, deliveredAt: null, givenUpAt: null, lastError: 'HTTP 500' })
      expect(row.nextAttemptAt.getTime(), `the retry after attempt ${index + 1}`).toBeGreaterThanOrEqual(started + delay * 1000)
      expect(row.nextAttemptAt.getTime(), `the retry after attempt ${index + 1}`).toBeLessThanOrEqual(ended + delay * 1000)
    }
    expect(lines.some((line) => line.includes('webhook event given up'))).toBe(false)

    await makeDue(iso.owner, eventId)
    expect(await service.current.webhooks.deliverer.runOnce()).toBe(1)
    const last = await eventRow(iso.owner, eventId)
    expect(last).toMatchObject({ attempts: 8, deliveredAt: null, lastError: 'HTTP 500', claimToken: null })
    expect(last.givenUpAt).toBeInstanceOf(Date)

    // Given up: never claimed again, even once due.
    await makeDue(iso.owner, eventId)
    expect(await service.current.webhooks.deliverer.runOnce()).toBe(0)
    expect(receiver.requests).toHaveLength(8)
    for (const request of receiver.requests) expect(verified(secret, request).type).toBe('sms.message.completed')
    expect(new Set(receiver.requests.map((request) => request.headers['webhook-id'])).size).toBe(1)

    expect(await metric(service.current, deliveries('failed'))).toBe(failedBefore + 7)
    expect(await metric(service.current, deliveries('given_up'))).toBe(givenUpBefore + 1)
    const givenUp = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'webhook event given up')
    expect(givenUp).toHaveLength(1)
    expect(givenUp[0]).toMatchObject({ level: 40, tenantId: academy.tenantId, eventId, attempts: 8, error: 'HTTP 500' })

    // Neither the secret nor its key bytes (base64) in any line, at any level.
    const key = secret.slice('whsec_'.length)
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.filter((line) => line.includes(key))).toEqual([])
  })
})
