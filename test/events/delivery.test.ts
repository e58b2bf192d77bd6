import { describe, expect, it } from 'vitest'
import {
  completedMessage,
  eventRow,
  eventRows,
  isolatedAcademy,
  makeDue,
  putEndpoint,
  rotateSecret,
  useDeliveryBed,
  verified,
  webhookIdOf,
  type Receiver,
} from './delivery-bed.js'

// Delivery of the outbox on loopback receivers (SVC_WEBHOOK_ALLOW_PRIVATE=true), driven by runOnce: retries under the
// same webhook-id, secret rotation, tenants kept apart, redirects not followed, a removed endpoint's events dropped.
describe('webhook delivery', () => {
  const bed = useDeliveryBed()
  const receiver = bed.receiver

  /** An academy whose endpoint is `receiver`, with one completed message's event waiting. */
  async function academyWithEvent(to: Receiver) {
    const academy = await isolatedAcademy(bed.app, bed.iso.owner)
    const secret = await putEndpoint(bed.app, academy, to.url)
    const smsId = await completedMessage(bed.app, bed.iso.owner, academy)
    const [row] = await eventRows(bed.iso.owner, academy.tenantId)
    return { academy, secret, smsId, eventId: row!.id }
  }

  it('retries a failed delivery after 5 s with the same webhook-id and body, both attempts signed', async () => {
    const failing = await receiver([500, 204])
    const { secret, eventId, smsId } = await academyWithEvent(failing)

    const started = Date.now()
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(1)
    const ended = Date.now()
    const first = await eventRow(bed.iso.owner, eventId)
    expect(first).toMatchObject({ attempts: 1, deliveredAt: null, givenUpAt: null, lastError: 'HTTP 500', claimToken: null })
    expect(first.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(started + 5000)
    expect(first.nextAttemptAt.getTime()).toBeLessThanOrEqual(ended + 5000)
    // Not due yet: nothing is claimed before its time.
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(0)

    await makeDue(bed.iso.owner, eventId)
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(1)
    const second = await eventRow(bed.iso.owner, eventId)
    expect(second).toMatchObject({ attempts: 2, lastError: null, givenUpAt: null })
    expect(second.deliveredAt).toBeInstanceOf(Date)

    expect(failing.requests).toHaveLength(2)
    const [one, two] = failing.requests
    expect(one!.headers['webhook-id']).toBe(webhookIdOf(first))
    expect(two!.headers['webhook-id']).toBe(one!.headers['webhook-id'])
    expect(Buffer.from(two!.body).equals(Buffer.from(one!.body))).toBe(true)
    expect(verified(secret, one!)).toEqual(verified(secret, two!))
    expect(verified(secret, two!).data.messageId).toBe(smsId)

    // Delivered: never claimed again.
    await makeDue(bed.iso.owner, eventId)
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(0)
    expect(failing.requests).toHaveLength(2)
  })

  it('signs with the new secret after POST /v1/webhook-endpoint/secret, and the old one no longer verifies', async () => {
    const to = await receiver()
    const academy = await isolatedAcademy(bed.app, bed.iso.owner)
    const oldSecret = await putEndpoint(bed.app, academy, to.url)
    // An event written before the rotation is signed when it is sent: with the secret of that moment.
    await completedMessage(bed.app, bed.iso.owner, academy)
    const newSecret = await rotateSecret(bed.app, academy)
    expect(newSecret).not.toBe(oldSecret)
    await bed.app.webhooks.deliverer.runOnce()
    await completedMessage(bed.app, bed.iso.owner, academy)
    await bed.app.webhooks.deliverer.runOnce()

    expect(to.requests).toHaveLength(2)
    for (const request of to.requests) {
      expect(verified(newSecret, request).type).toBe('sms.message.completed')
      expect(() => verified(oldSecret, request)).toThrow()
    }
  })

  it("gives each academy's receiver only its own events, signed with its own secret", async () => {
    const [toA, toB] = [await receiver(), await receiver()]
    const academyA = await isolatedAcademy(bed.app, bed.iso.owner)
    const academyB = await isolatedAcademy(bed.app, bed.iso.owner)
    const secretA = await putEndpoint(bed.app, academyA, toA.url)
    const secretB = await putEndpoint(bed.app, academyB, toB.url)
    const messagesA = [await completedMessage(bed.app, bed.iso.owner, academyA), await completedMessage(bed.app, bed.iso.owner, academyA)]
    const messagesB = [await completedMessage(bed.app, bed.iso.owner, academyB)]

    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(3)

    const idsOf = (to: Receiver, secret: string) => to.requests.map((request) => verified(secret, request).data.messageId).sort()
    expect(idsOf(toA, secretA)).toEqual([...messagesA].sort())
    expect(idsOf(toB, secretB)).toEqual(messagesB)
    for (const request of toA.requests) expect(() => verified(secretB, request)).toThrow()
    for (const request of toB.requests) expect(() => verified(secretA, request)).toThrow()
  })

  it('does not follow a redirect: a 302 is a failed attempt and its Location receives nothing', async () => {
    const elsewhere = await receiver()
    const redirecting = await receiver([{ status: 302, headers: { location: `http://127.0.0.1:${elsewhere.port}/` } }])
    const { eventId } = await academyWithEvent(redirecting)

    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(1)
    expect(redirecting.requests).toHaveLength(1)
    expect(elsewhere.requests).toEqual([])
    expect(await eventRow(bed.iso.owner, eventId)).toMatchObject({ attempts: 1, deliveredAt: null, givenUpAt: null, lastError: 'HTTP 302' })
  })

  it('drops the events still waiting when the endpoint is deleted, and sends nothing', async () => {
    const to = await receiver([500])
    const { academy, eventId } = await academyWithEvent(to)
    // One event already tried and waiting for its retry, one never tried.
    await bed.app.webhooks.deliverer.runOnce()
    expect(await eventRow(bed.iso.owner, eventId)).toMatchObject({ attempts: 1, deliveredAt: null })
    await makeDue(bed.iso.owner, eventId)
    await completedMessage(bed.app, bed.iso.owner, academy)
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toHaveLength(2)

    const removed = await bed.app.inject({ method: 'DELETE', url: '/v1/webhook-endpoint', headers: academy.owner.headers })
    expect(removed.statusCode).toBe(204)
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toEqual([])
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(0)
    expect(to.requests).toHaveLength(1)
  })
})
