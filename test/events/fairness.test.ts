import { describe, expect, it } from 'vitest'
import { createWebhookDeliverer, type Deliverer } from '../../lib/events/deliverer.js'
import { until } from '../support/auth-fixtures.js'
import { completedMessage, eventRows, isolatedAcademy, putEndpoint, useDeliveryBed, type Answer } from './delivery-bed.js'

/** This file's SVC_WEBHOOK_TENANT_CONCURRENCY: not the default, so what holds is seen to be the setting. */
const TENANT_LIMIT = 3
const BACKLOG = 40
/** Longer than any test here: an attempt to a receiver that hangs never frees its worker by itself. */
const TIME_LIMIT_MS = 60_000

// One tenant cannot hold up another's events: the claim takes every tenant's oldest event before any tenant's next,
// and no tenant has more than SVC_WEBHOOK_TENANT_CONCURRENCY deliveries at once, counted in the database across
// every instance. The deliverers are the test's own over the app's database (the app's loop is off).
describe('webhook delivery across tenants', () => {
  const bed = useDeliveryBed({ SVC_WEBHOOK_TENANT_CONCURRENCY: String(TENANT_LIMIT) })

  function deliverer(concurrency: number): Deliverer {
    return createWebhookDeliverer({
      db: bed.app.db,
      log: bed.app.log,
      sealingKey: bed.app.webhooks.sealingKey,
      timeoutMs: TIME_LIMIT_MS,
      allowPrivate: true,
      concurrency,
      tenantConcurrency: bed.app.env.SVC_WEBHOOK_TENANT_CONCURRENCY,
    })
  }

  /** An academy whose endpoint is a new receiver answering `answers`, with `events` completed messages' events. */
  async function academyWith(answers: Answer[], events: number) {
    const receiver = await bed.receiver(answers)
    const academy = await isolatedAcademy(bed.app, bed.iso.owner)
    await putEndpoint(bed.app, academy, receiver.url)
    for (let i = 0; i < events; i++) await completedMessage(bed.app, bed.iso.owner, academy)
    return { academy, receiver }
  }

  const delivered = async (tenantId: number) => (await eventRows(bed.iso.owner, tenantId)).every((row) => row.deliveredAt !== null)

  it("delivers another tenant's first event in the first round, while an older backlog's receiver hangs", async () => {
    const backlog = await academyWith(['hang'], BACKLOG)
    const other = await academyWith([204], 1)
    // As many workers as one tenant may hold: first come first served, the backlog would take every one of them.
    const instance = deliverer(TENANT_LIMIT)
    try {
      instance.kick()
      await until(() => delivered(other.academy.tenantId), 10_000)
      // No worker was freed by a hung attempt ending: the other event went out in the same round as the backlog's.
      expect(backlog.receiver.requests.length).toBeGreaterThan(0)
      expect(backlog.receiver.requests.every((request) => request.closedAt === null)).toBe(true)
      expect(other.receiver.requests).toHaveLength(1)
    } finally {
      await backlog.receiver.close()
      await instance.stop()
    }
  })

  it('holds a tenant whose receiver hangs to SVC_WEBHOOK_TENANT_CONCURRENCY workers, and the others deliver', async () => {
    const backlog = await academyWith(['hang'], BACKLOG)
    const instance = deliverer(8)
    try {
      instance.kick()
      await until(() => backlog.receiver.requests.length === TENANT_LIMIT)
      const others = [await academyWith([204], 1), await academyWith([204], 1), await academyWith([204], 1)]
      instance.kick()
      for (const { academy } of others) await until(() => delivered(academy.tenantId), 10_000)
      expect(backlog.receiver.requests.every((request) => request.closedAt === null)).toBe(true)
      expect(backlog.receiver.requests).toHaveLength(TENANT_LIMIT)
      expect(backlog.receiver.mostOpen).toBe(TENANT_LIMIT)
    } finally {
      await backlog.receiver.close()
      await instance.stop()
    }
  })

  it("never has more than SVC_WEBHOOK_TENANT_CONCURRENCY of a tenant's requests open at its receiver, with two instances", async () => {
    const events = 24
    const busy = await academyWith(Array<Answer>(events).fill({ status: 204, delayMs: 40 }), events)
    const [first, second] = [deliverer(8), deliverer(8)]
    try {
      first.kick()
      second.kick()
      await until(() => delivered(busy.academy.tenantId), 20_000)
    } finally {
      await Promise.all([first.stop(), second.stop()])
    }
    expect(busy.receiver.requests).toHaveLength(events)
    expect(new Set(busy.receiver.requests.map((request) => request.headers['webhook-id'])).size).toBe(events)
    expect(busy.receiver.mostOpen).toBe(TENANT_LIMIT)
  })

  it("claims at most SVC_WEBHOOK_TENANT_CONCURRENCY of a tenant's due events at once in the app's deliverer", async () => {
    const { academy } = await academyWith([204], 5)
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(TENANT_LIMIT)
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(5 - TENANT_LIMIT)
    expect(await delivered(academy.tenantId)).toBe(true)
  })
})
