import { describe, expect, it } from 'vitest'
import { createWebhookDeliverer } from '../../lib/events/deliverer.js'
import { until } from '../support/auth-fixtures.js'
import { collectingGarbage } from './garbage-collection.js'
import {
  completedMessage,
  eventRows,
  isolatedAcademy,
  putEndpoint,
  useDeliveryBed,
  verified,
  type Answer,
} from './delivery-bed.js'

const TIMEOUT_MS = 300
/**
 * The time limit while collections are forced: collections every 50 ms slow everything down, and the healthy
 * receiver's answer must still come within it.
 */
const COLLECTING_TIMEOUT_MS = 2000

// A receiver that never answers holds one worker for SVC_WEBHOOK_TIMEOUT_MS and no longer: the other workers deliver
// other tenants' events meanwhile, and the hung attempt ends as a failed one. The loop here is a deliverer of the
// test's own over the app's database (the app's kick does nothing with SVC_SMS_DISPATCHER=off), two workers.
describe('webhook delivery with a receiver that hangs', () => {
  const bed = useDeliveryBed({ SVC_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), SVC_WEBHOOK_CONCURRENCY: '2' })

  async function subscribedTo(answers: Answer[]) {
    const receiver = await bed.receiver(answers)
    const academy = await isolatedAcademy(bed.app, bed.iso.owner)
    const secret = await putEndpoint(bed.app, academy, receiver.url)
    return { academy, receiver, secret }
  }

  const ownDeliverer = (timeoutMs = bed.app.env.SVC_WEBHOOK_TIMEOUT_MS) =>
    createWebhookDeliverer({
      db: bed.app.db,
      log: bed.app.log,
      sealingKey: bed.app.webhooks.sealingKey,
      timeoutMs,
      allowPrivate: bed.app.env.SVC_WEBHOOK_ALLOW_PRIVATE,
      concurrency: bed.app.env.SVC_WEBHOOK_CONCURRENCY,
      tenantConcurrency: bed.app.env.SVC_WEBHOOK_TENANT_CONCURRENCY,
    })

  it('delivers other events while one hangs, ends the hung attempt at the time limit, and frees its worker', async () => {
    const deliverer = ownDeliverer()
    try {
      const hung = await subscribedTo(['hang'])
      const healthy = await subscribedTo([204])
      const hungSms = await completedMessage(bed.app, bed.iso.owner, hung.academy)
      deliverer.kick()
      await until(() => hung.receiver.requests.length === 1)

      // The hung delivery holds one worker; a kick puts the other on the next event, which arrives before the hung
      // request is given up.
      const healthySms = await completedMessage(bed.app, bed.iso.owner, healthy.academy)
      deliverer.kick()
      await until(() => healthy.receiver.requests.length === 1)
      const [waiting] = hung.receiver.requests
      expect(healthy.receiver.requests[0]!.arrivedAt).toBeLessThan(waiting!.closedAt ?? Infinity)
      expect(verified(healthy.secret, healthy.receiver.requests[0]!).data.messageId).toBe(healthySms)
      await until(async () => (await eventRows(bed.iso.owner, healthy.academy.tenantId))[0]?.deliveredAt != null)

      await until(async () => (await eventRows(bed.iso.owner, hung.academy.tenantId))[0]?.attempts === 1)
      const [hungRow] = await eventRows(bed.iso.owner, hung.academy.tenantId)
      expect(hungRow).toMatchObject({ deliveredAt: null, givenUpAt: null, lastError: `no answer within ${TIMEOUT_MS} ms` })
      expect(verified(hung.secret, waiting!).data.messageId).toBe(hungSms)
      // The service closed the connection at its time limit (a fraction of a second), not at a default of seconds.
      await until(() => waiting!.closedAt !== null)
      expect(waiting!.closedAt! - waiting!.arrivedAt).toBeLessThan(3000)

      // Both workers are free: two receivers that answer only once both have their request are both delivered.
      let bothArrived!: () => void
      const barrier = new Promise<void>((resolve) => (bothArrived = resolve))
      const first = await subscribedTo([{ status: 204, after: barrier }])
      const second = await subscribedTo([{ status: 204, after: barrier }])
      await completedMessage(bed.app, bed.iso.owner, first.academy)
      await completedMessage(bed.app, bed.iso.owner, second.academy)
      deliverer.kick()
      await until(() => first.receiver.requests.length + second.receiver.requests.length === 2)
      bothArrived()
      for (const { academy } of [first, second]) {
        await until(async () => (await eventRows(bed.iso.owner, academy.tenantId))[0]?.deliveredAt != null)
        expect((await eventRows(bed.iso.owner, academy.tenantId))[0]).toMatchObject({ attempts: 1, lastError: null })
      }
    } finally {
      await deliverer.stop()
    }
  })

  // Real timers and real collections, as in a service that runs for days: on Node 20 a time limit made of
  // AbortSignal.any and AbortSignal.timeout was collected before it fired, and one tenant's hung receiver then held
  // every worker until a restart. Forced collections all along make everything slow on a busy two-core machine (CI),
  // so the test has a budget of its own: what it checks is the service's time limit, not how long the run takes.
  it("ends hung attempts at the time limit while garbage is collected, and their workers deliver another tenant's event", async () => {
    const stopCollecting = collectingGarbage()
    const deliverer = ownDeliverer(COLLECTING_TIMEOUT_MS)
    try {
      const hung = await subscribedTo(['hang'])
      const healthy = await subscribedTo([204])
      // Two workers, both held by the hung receiver's two events.
      await completedMessage(bed.app, bed.iso.owner, hung.academy)
      await completedMessage(bed.app, bed.iso.owner, hung.academy)
      deliverer.kick()
      await until(() => hung.receiver.requests.length === 2)
      await completedMessage(bed.app, bed.iso.owner, healthy.academy)
      deliverer.kick()

      await until(async () => (await eventRows(bed.iso.owner, healthy.academy.tenantId))[0]?.deliveredAt != null, 15_000)
      await until(async () => (await eventRows(bed.iso.owner, hung.academy.tenantId)).every((row) => row.attempts === 1))
      for (const row of await eventRows(bed.iso.owner, hung.academy.tenantId)) {
        expect(row).toMatchObject({ deliveredAt: null, lastError: `no answer within ${COLLECTING_TIMEOUT_MS} ms` })
      }
      expect(hung.receiver.requests.every((request) => request.closedAt !== null)).toBe(true)
    } finally {
      stopCollecting()
      await deliverer.stop()
    }
  }, 90_000)

  it('ends a hung attempt at the time limit with runOnce too, delivering the other event claimed with it', async () => {
    const hung = await subscribedTo(['hang'])
    const healthy = await subscribedTo([204])
    await completedMessage(bed.app, bed.iso.owner, hung.academy)
    await completedMessage(bed.app, bed.iso.owner, healthy.academy)

    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(2)

    const [waiting] = hung.receiver.requests
    await until(() => waiting!.closedAt !== null)
    expect(healthy.receiver.requests[0]!.arrivedAt).toBeLessThan(waiting!.closedAt!)
    expect((await eventRows(bed.iso.owner, healthy.academy.tenantId))[0]).toMatchObject({ attempts: 1, lastError: null })
    expect((await eventRows(bed.iso.owner, hung.academy.tenantId))[0]).toMatchObject({
      attempts: 1,
      deliveredAt: null,
      lastError: `no answer within ${TIMEOUT_MS} ms`,
    })
  })
})
