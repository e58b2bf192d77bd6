import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { enqueueSystemSms, systemSmsSettings } from '../../lib/dispatch/system-messages.js'
import { until } from '../support/auth-fixtures.js'
import {
  eventRows,
  heldMessage,
  isolatedAcademy,
  moveStatus,
  putEndpoint,
  useDeliveryBed,
  verified,
  webhookIdOf,
  type IsolatedAcademy,
  type Receiver,
  type StatusChange,
} from './delivery-bed.js'

// Which status changes write an event, what it says, and what its request carries. The deliverer claims across
// tenants: a database of this file's own, no background loop (SVC_SMS_DISPATCHER=off), runOnce drives it.
describe('delivery events of a message (sms.message.completed, sms.message.cancelled)', () => {
  const bed = useDeliveryBed()

  /** An academy with an endpoint on a receiver of its own. */
  async function subscribed(events?: string[]) {
    const academy = await isolatedAcademy(bed.app, bed.iso.owner)
    const receiver = await bed.receiver()
    const secret = await putEndpoint(bed.app, academy, receiver.url, events)
    return { academy, receiver, secret }
  }

  function sendNow(academy: IsolatedAcademy, extra: Record<string, unknown> = {}) {
    return bed.app.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers: { ...academy.manager.headers, 'idempotency-key': randomUUID() },
      payload: {
        title: 'Notice',
        content: 'Hello {name}',
        recipients: [
          { phone: '010-7000-0001', name: 'Kim' },
          { phone: '010-7000-0002', name: 'Lee' },
        ],
        ...extra,
      },
    })
  }

  async function scheduledAndCancelled(academy: IsolatedAcademy): Promise<number> {
    const sent = await sendNow(academy, { scheduledAt: new Date(Date.now() + 3_600_000).toISOString() })
    expect(sent.statusCode, sent.body).toBe(201)
    const id = (sent.json() as { id: number }).id
    const cancel = await bed.app.inject({ method: 'POST', url: `/v1/sms/history/${id}/cancel`, headers: academy.manager.headers })
    expect(cancel.statusCode, cancel.body).toBe(200)
    return id
  }

  async function completed(academy: IsolatedAcademy, change: StatusChange = { status: 'SENT', successCount: 2 }): Promise<number> {
    const smsId = await heldMessage(bed.iso.owner, academy)
    await moveStatus(bed.app, academy.tenantId, smsId, change)
    return smsId
  }

  /** Delivers what is due and answers the one request the receiver got, checked against the event's row. */
  async function deliverOne(academy: IsolatedAcademy, receiver: Receiver, secret: string) {
    const before = Math.floor(Date.now() / 1000)
    await bed.app.webhooks.deliverer.runOnce()
    const after = Math.ceil(Date.now() / 1000)
    expect(receiver.requests).toHaveLength(1)
    const [request] = receiver.requests
    const [row] = await eventRows(bed.iso.owner, academy.tenantId)
    expect(row).toMatchObject({ attempts: 1, lastError: null })
    expect(row!.deliveredAt).toBeInstanceOf(Date)
    expect(request!.headers['content-type']).toBe('application/json')
    expect(request!.headers['webhook-id']).toBe(webhookIdOf(row!))
    expect(request!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(Number(request!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before)
    expect(Number(request!.headers['webhook-timestamp'])).toBeLessThanOrEqual(after)
    expect(request!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(request!.body).toBe(row!.body)
    const event = verified(secret, request!)
    expect(event.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(Math.abs(Date.parse(event.timestamp) - row!.createdAt.getTime())).toBeLessThan(1000)
    return event
  }

  it('sends sms.message.completed once when a send reaches SENT through the mock provider and the dispatcher', async () => {
    const { academy, receiver, secret } = await subscribed()
    const sent = await sendNow(academy)
    expect(sent.statusCode, sent.body).toBe(201)
    const smsId = (sent.json() as { id: number }).id
    await bed.app.dispatcher.runOnce()
    const statusOf = async () =>
      (await bed.iso.owner.selectFrom('smsMessages').select('status').where('id', '=', smsId).executeTakeFirstOrThrow()).status
    await until(async () => (await statusOf()) === 'SENT')

    expect((await eventRows(bed.iso.owner, academy.tenantId)).map((row) => row.eventType)).toEqual(['sms.message.completed'])
    expect(await deliverOne(academy, receiver, secret)).toEqual({
      type: 'sms.message.completed',
      timestamp: expect.any(String),
      data: { messageId: smsId, status: 'SENT', purpose: 'INFORMATIONAL', recipientCount: 2, successCount: 2, failCount: 0, optedOutCount: 0 },
    })
  })

  it('sends sms.message.completed once for FAILED, with its counts', async () => {
    const { academy, receiver, secret } = await subscribed()
    const smsId = await completed(academy, { status: 'FAILED', successCount: 0, failCount: 2 })
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toHaveLength(1)
    expect(await deliverOne(academy, receiver, secret)).toEqual({
      type: 'sms.message.completed',
      timestamp: expect.any(String),
      data: { messageId: smsId, status: 'FAILED', purpose: 'INFORMATIONAL', recipientCount: 2, successCount: 0, failCount: 2, optedOutCount: 0 },
    })
  })

  it('sends sms.message.completed once for PARTIAL, with the purpose and the opted-out count of the message', async () => {
    const { academy, receiver, secret } = await subscribed()
    const smsId = await heldMessage(bed.iso.owner, academy)
    await bed.iso.owner
      .updateTable('smsMessages')
      .set({ purpose: 'ADVERTISEMENT', adSenderName: 'Academy', adOptOutNumber: '0801234567', recipientCount: 3 })
      .where('id', '=', smsId)
      .execute()
    await moveStatus(bed.app, academy.tenantId, smsId, { status: 'PARTIAL', successCount: 1, failCount: 1, optedOutCount: 1 })
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toHaveLength(1)
    expect(await deliverOne(academy, receiver, secret)).toEqual({
      type: 'sms.message.completed',
      timestamp: expect.any(String),
      data: { messageId: smsId, status: 'PARTIAL', purpose: 'ADVERTISEMENT', recipientCount: 3, successCount: 1, failCount: 1, optedOutCount: 1 },
    })
  })

  it('sends sms.message.cancelled once when a scheduled message is cancelled through the API', async () => {
    const { academy, receiver, secret } = await subscribed()
    const smsId = await scheduledAndCancelled(academy)
    expect((await eventRows(bed.iso.owner, academy.tenantId)).map((row) => row.eventType)).toEqual(['sms.message.cancelled'])
    expect(await deliverOne(academy, receiver, secret)).toEqual({
      type: 'sms.message.cancelled',
      timestamp: expect.any(String),
      data: { messageId: smsId, status: 'CANCELLED', purpose: 'INFORMATIONAL', recipientCount: 2, successCount: 0, failCount: 0, optedOutCount: 0 },
    })
  })

  it('writes no event for a status change that is not an end (DISPATCHED), nor twice for the same status', async () => {
    const { academy } = await subscribed()
    const smsId = await heldMessage(bed.iso.owner, academy)
    await moveStatus(bed.app, academy.tenantId, smsId, { status: 'DISPATCHED' })
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toEqual([])
    await moveStatus(bed.app, academy.tenantId, smsId, { status: 'SENT', successCount: 1 })
    await moveStatus(bed.app, academy.tenantId, smsId, { status: 'SENT', successCount: 2 })
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toHaveLength(1)
  })

  it("writes only cancellations for an endpoint subscribed to ['sms.message.cancelled']", async () => {
    const { academy, receiver, secret } = await subscribed(['sms.message.cancelled'])
    await completed(academy)
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toEqual([])
    const smsId = await scheduledAndCancelled(academy)
    expect((await eventRows(bed.iso.owner, academy.tenantId)).map((row) => row.eventType)).toEqual(['sms.message.cancelled'])
    expect((await deliverOne(academy, receiver, secret)).data.messageId).toBe(smsId)
  })

  it("writes only completions for an endpoint subscribed to ['sms.message.completed']", async () => {
    const { academy, receiver, secret } = await subscribed(['sms.message.completed'])
    await scheduledAndCancelled(academy)
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toEqual([])
    const smsId = await completed(academy)
    expect((await eventRows(bed.iso.owner, academy.tenantId)).map((row) => row.eventType)).toEqual(['sms.message.completed'])
    expect((await deliverOne(academy, receiver, secret)).data.messageId).toBe(smsId)
  })

  it('writes no event for an academy without an endpoint', async () => {
    const academy = await isolatedAcademy(bed.app, bed.iso.owner)
    await completed(academy)
    await scheduledAndCancelled(academy)
    expect(await eventRows(bed.iso.owner, academy.tenantId)).toEqual([])
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(0)
  })

  it('never writes an event for a system message (a one-time code), whatever its status', async () => {
    const { academy, receiver } = await subscribed()
    const settings = { ...systemSmsSettings(bed.app.env), systemSender: null }
    const codeId = await withTenant(bed.app.db, academy.tenantId, (trx) =>
      enqueueSystemSms(trx, settings, { tenantId: academy.tenantId, kind: 'VERIFICATION_CODE', to: '010-7000-0009', text: 'code 123456' }),
    )
    await bed.app.dispatcher.runOnce()
    await until(async () => {
      const { status } = await bed.iso.owner.selectFrom('smsMessages').select('status').where('id', '=', codeId).executeTakeFirstOrThrow()
      return status !== 'PENDING' && status !== 'DISPATCHED'
    })
    const otherCode = await withTenant(bed.app.db, academy.tenantId, (trx) =>
      enqueueSystemSms(trx, settings, { tenantId: academy.tenantId, kind: 'VERIFICATION_CODE', to: '010-7000-0008', text: 'code 654321' }),
    )
    await moveStatus(bed.app, academy.tenantId, otherCode, { status: 'FAILED', failCount: 1 })

    expect(await eventRows(bed.iso.owner, academy.tenantId)).toEqual([])
    expect(await bed.app.webhooks.deliverer.runOnce()).toBe(0)
    expect(receiver.requests).toEqual([])
  })
})
