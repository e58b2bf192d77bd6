import { describe, expect, it } from 'vitest'
import { createWebhookDeliverer } from '../../lib/events/deliverer.js'
import { until } from '../support/auth-fixtures.js'
import { completedMessage, eventRows, isolatedAcademy, putEndpoint, useDeliveryBed, verified } from './delivery-bed.js'

const EVENTS = 60

// Two instances' deliverers on one database claim with SKIP LOCKED: each event is sent by one of them, once, never
// by both at the same time, and between them every event is delivered.
describe('webhook delivery by two instances at once', () => {
  const bed = useDeliveryBed()

  it('sends each event once: every webhook-id arrives exactly once, and every event ends delivered', async () => {
    const receiver = await bed.receiver(Array(EVENTS).fill(204))
    const academy = await isolatedAcademy(bed.app, bed.iso.owner)
    const secret = await putEndpoint(bed.app, academy, receiver.url)
    for (let i = 0; i < EVENTS; i++) await completedMessage(bed.app, bed.iso.owner, academy)

    const deliverer = () =>
      createWebhookDeliverer({
        db: bed.app.db,
        log: bed.app.log,
        sealingKey: bed.app.webhooks.sealingKey,
        timeoutMs: 5000,
        allowPrivate: true,
        concurrency: 4,
        tenantConcurrency: 4,
      })
    const [first, second] = [deliverer(), deliverer()]
    try {
      // Both claim at once: between them they hold at most the tenant's 4 claims, and claim again as workers free up.
      first.kick()
      second.kick()
      await until(async () => (await eventRows(bed.iso.owner, academy.tenantId)).every((row) => row.deliveredAt !== null), 20_000)
    } finally {
      await Promise.all([first.stop(), second.stop()])
    }

    const ids = receiver.requests.map((request) => request.headers['webhook-id'])
    expect(new Set(ids).size).toBe(EVENTS)
    expect(ids).toHaveLength(EVENTS)
    for (const request of receiver.requests) verified(secret, request)
    const rows = await eventRows(bed.iso.owner, academy.tenantId)
    expect(rows.map((row) => row.attempts)).toEqual(Array(EVENTS).fill(1))
  })
})
