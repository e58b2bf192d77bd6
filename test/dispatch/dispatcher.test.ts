import { describe, expect, it } from 'vitest'
import { TenantContextMissing } from '../../db/errors.js'
import { claimDueMessages } from '../../db/repos/dispatch/dispatch.js'
import type { Dispatcher } from '../../lib/dispatch/dispatcher.js'
import { createMockProvider } from '../../lib/dispatch/providers/mock.js'
import type { SmsProvider } from '../../lib/dispatch/providers/provider.js'
import { insertManyPendingMessages, insertPendingMessage, insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { useDispatchTestBed } from './dispatch-test-bed.js'
import { itConcurrent } from '../support/helper.js'
import { openGroupOf } from './hand-over-faults.js'

describe('dispatcher', () => {
  const bed = useDispatchTestBed(6)
  const { dispatcher, extsms, sentFor } = bed

  it('sends a due message with personalised text and custom fields, then marks it DISPATCHED', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, { ...tenant, content: 'Hello {name}, class {className}', recipients: [
      { phone: '01012345678', name: 'Kim', className: 'Math' },
      { phone: '01098765432', name: 'Lee', className: 'Art' },
    ] })
    await dispatcher().runOnce()

    const sent = sentFor(smsId)
    expect(sent.map((message) => [message.to, message.from, message.text, message.type, message.customFields])).toEqual([
      ['01012345678', '0212345678', 'Hello Kim, class Math', 'SMS', { svcTenant: tenant.slug, svcSmsId: String(smsId), svcRecipient: '0' }],
      ['01098765432', '0212345678', 'Hello Lee, class Art', 'SMS', { svcTenant: tenant.slug, svcSmsId: String(smsId), svcRecipient: '1' }],
    ])
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, claimToken: null, providerGroupId: sent[0]!.groupId })
    expect(state.sentAt).toBeInstanceOf(Date)
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerMessageId])).toEqual(
      sent.map((message) => ['DISPATCHED', message.messageId]),
    )
  })

  it('sends LMS with its type and the title as subject', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, { ...tenant, messageType: 'LMS', title: 'Exam notice', content: 'x'.repeat(120) })
    await dispatcher().runOnce()
    const request = bed.fake.requests.find((entry) => entry.body.messages[0]?.customFields.svcSmsId === String(smsId))
    expect(request?.body.messages[0]).toMatchObject({ type: 'LMS', subject: 'Exam notice' })
  })

  it('leaves a scheduled message alone until it is due', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const later = new Date(Date.now() + 3_600_000)
    const smsId = await insertPendingMessage(bed.iso.owner, { ...tenant, scheduledAt: later, nextAttemptAt: later })
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toEqual([])
    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date(Date.now() - 1000) }).where('id', '=', smsId).execute()
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toHaveLength(2)
  })

  it('keeps a message PENDING with the error after a retryable failure, then succeeds on retry', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ status: 503 })
    const before = Date.now()
    await dispatcher().runOnce()
    const failed = await messageState(bed.iso.owner, smsId)
    expect(failed).toMatchObject({ status: 'PENDING', dispatchAttempts: 1, claimToken: null })
    expect(failed.lastProviderError).toMatch(/503/)
    // Backoff: base 30 s plus at most 20 % jitter, so between 30 and 36 s ahead.
    const delay = failed.nextAttemptAt.getTime() - before
    expect(delay).toBeGreaterThanOrEqual(30_000)
    expect(delay).toBeLessThanOrEqual(37_000)

    bed.fake.reset()
    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date() }).where('id', '=', smsId).execute()
    await dispatcher().runOnce()
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 2, lastProviderError: null })
  })

  it('treats 429 and a timeout as retryable', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const throttled = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ status: 429 })
    await dispatcher().runOnce()
    expect(await messageState(bed.iso.owner, throttled)).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })

    const slow = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ timeoutMs: 1500 })
    await dispatcher({ provider: extsms(200) }).runOnce()
    const state = await messageState(bed.iso.owner, slow)
    expect(state).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })
    expect(state.lastProviderError).toMatch(/no answer/)
  })

  it('fails the message and its recipients once attempts reach the maximum', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ status: 500 })
    const engine = dispatcher({ maxAttempts: 2 })
    await engine.runOnce()
    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date() }).where('id', '=', smsId).execute()
    await engine.runOnce()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'FAILED', dispatchAttempts: 2, failCount: 2, successCount: 0 })
    expect(state.recipients.every((recipient) => recipient.deliveryStatus === 'FAILED')).toBe(true)
  })

  it('fails at once on a final provider refusal of the whole call', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ status: 400, errorCode: 'ValidationError' })
    await dispatcher().runOnce()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'FAILED', dispatchAttempts: 1, failCount: 2 })
    expect(state.lastProviderError).toMatch(/ValidationError/)
  })

  it("fails the untaken recipients after one refused send (400) whose group, read back, shows nothing sent", async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ status: 400, errorCode: 'ValidationError', phase: 'send' })
    const callsBefore = bed.fake.calls.length
    const engine = dispatcher({ maxAttempts: 3 })
    // As many attempts as the message may take: a refused send must not be tried again in any of them.
    for (let attempt = 1; attempt <= 3; attempt++) {
      await engine.runOnce()
      if ((await messageState(bed.iso.owner, smsId)).status !== 'PENDING') break
      await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date() }).where('id', '=', smsId).execute()
    }

    const phases = bed.fake.calls.slice(callsBefore).map((call) => call.phase)
    expect(phases.filter((phase) => phase === 'send')).toHaveLength(1)
    expect(phases.slice(0, 4)).toEqual(['create', 'add', 'send', 'read'])
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'FAILED', dispatchAttempts: 1, successCount: 0, failCount: 2, sentAt: null, claimToken: null })
    expect(state.lastProviderError).toMatch(/ValidationError/)
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['FAILED', 'FAILED'])
    expect(await openGroupOf(bed.iso.owner, smsId)).toBeNull()
    expect(sentFor(smsId)).toEqual([])
  })

  it('never fails recipients a refused send took after all: its group, read back as sent, is left to the next attempt', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    const live = extsms()
    // The send goes out, then the answer is a refusal (a provider that refuses a second send, say).
    const refusesAfterSending: SmsProvider = {
      name: live.name,
      callTimeoutMs: live.callTimeoutMs,
      createGroup: (owner) => live.createGroup(owner),
      addMessages: (groupId, request) => live.addMessages(groupId, request),
      readGroup: (groupId, recipients) => live.readGroup(groupId, recipients),
      sendGroup: async (groupId) => {
        await live.sendGroup(groupId)
        return { kind: 'rejected', error: 'GroupAlreadySent (HTTP 400)' }
      },
    }
    await dispatcher({ provider: refusesAfterSending }).runOnce()
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', failCount: 0 })
    expect(await openGroupOf(bed.iso.owner, smsId)).toMatch(/^G4V/)

    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date() }).where('id', '=', smsId).execute()
    await dispatcher().runOnce()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', failCount: 0 })
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['DISPATCHED', 'DISPATCHED'])
    expect(sentFor(smsId)).toHaveLength(2)
  })

  it('keeps the message PENDING with its group open when the send gets a 5xx: unknown, not refused', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ status: 503, phase: 'send' }, 1)
    await dispatcher({ maxAttempts: 3 }).runOnce()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })
    expect(await openGroupOf(bed.iso.owner, smsId)).toMatch(/^G4V/)
  })

  it('fails only the recipients the provider refuses and sends the rest', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ refuse: (message) => (message.to === '01098765432' ? '1062' : null) })
    await dispatcher().runOnce()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state.status).toBe('DISPATCHED')
    expect(state.failCount).toBe(1)
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerStatusCode])).toEqual([
      ['DISPATCHED', '2000'],
      ['FAILED', '1062'],
    ])
  })

  it('fails everything when the sender is not registered for any recipient', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ refuse: () => '1062' })
    await dispatcher().runOnce()
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'FAILED', failCount: 2, successCount: 0 })
  })

  it('never sends again a recipient the provider already accepted', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    // The first answer confirms only recipient 0 (recipient 1 is missing from both lists).
    await bed.iso.owner.updateTable('smsRecipients').set({ deliveryStatus: 'DISPATCHED', providerMessageId: 'M4V20260101000000AAAAAAAAAAAAAAA' })
      .where('smsId', '=', smsId).where('recipientIndex', '=', 0).execute()
    await dispatcher().runOnce()
    expect(sentFor(smsId).map((message) => message.customFields.svcRecipient)).toEqual(['1'])
  })

  it('takes over a claim whose lease expired, and the old holder cannot write results', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    // A crashed instance: it claimed the message with a short lease and never finished.
    const [stale] = (await claimDueMessages(bed.database.db, 100, 1)).filter((claim) => claim.smsId === smsId)
    expect(stale).toBeDefined()
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toEqual([])
    await bed.iso.owner.updateTable('smsMessages').set({ claimedUntil: new Date(Date.now() - 1000) }).where('id', '=', smsId).execute()
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toHaveLength(2)
    const afterTakeover = await messageState(bed.iso.owner, smsId)
    expect(afterTakeover).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1 })

    await dispatcher().processClaim(stale!)
    expect(sentFor(smsId)).toHaveLength(2)
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1 })
  })

  it('fails before any data access when a claim has no tenant context', async () => {
    let sends = 0
    const busy = async () => {
      sends++
      return { kind: 'retryable' as const, error: 'x' }
    }
    const counting: SmsProvider = { name: 'extsms', callTimeoutMs: 0, createGroup: busy, addMessages: busy, sendGroup: busy, readGroup: busy }
    for (const tenantId of [0, Number.NaN, null as unknown as number]) {
      await expect(dispatcher({ provider: counting }).processClaim({ tenantId, smsId: 1, claimToken: '00000000-0000-0000-0000-000000000000' })).rejects.toBeInstanceOf(TenantContextMissing)
    }
    expect(sends).toBe(0)
  })

  it('refuses a lease that does not outlast one provider call and a second of margin', () => {
    // A call started near the end of a shorter lease could land after another instance took the message over.
    expect(() => dispatcher({ provider: extsms(2_000), leaseSeconds: 3 })).toThrow(/must outlast one provider call \(2000 ms\)/)
    expect(() => dispatcher({ provider: extsms(1_999), leaseSeconds: 3 })).not.toThrow()
    expect(() => dispatcher({ provider: extsms(10_000), leaseSeconds: 11 })).toThrow(RangeError)
  })

  it('with the mock provider, reports every recipient DELIVERED through the callback path', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    await dispatcher({ provider: createMockProvider() }).runOnce()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'SENT', successCount: 2, failCount: 0 })
    expect(state.recipients.every((recipient) => recipient.deliveryStatus === 'DELIVERED' && recipient.providerMessageId?.startsWith('M4V'))).toBe(true)
    expect(state.providerGroupId).toMatch(/^G4V/)
  })

  itConcurrent('two instances on one database send 400 messages exactly once', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const ids = await insertManyPendingMessages(bed.iso.owner, tenant, 400)
    const second = bed.iso.open(6)
    try {
      const one = dispatcher({ batchSize: 50, concurrency: 8 })
      const two = dispatcher({ db: second.db, batchSize: 50, concurrency: 8 })
      const drain = async (engine: Dispatcher) => {
        while ((await engine.runOnce()) > 0) {
          // keep claiming until nothing is due
        }
      }
      await Promise.all([drain(one), drain(two)])
    } finally {
      await second.close()
    }
    const wanted = new Set(ids.map(String))
    const keys = bed.fake.sentMessages.filter((message) => wanted.has(message.customFields.svcSmsId!)).map((message) => `${message.customFields.svcSmsId}:${message.customFields.svcRecipient}`)
    expect(keys).toHaveLength(400)
    expect(new Set(keys).size).toBe(400)
    const states = await bed.iso.owner.selectFrom('smsMessages').select(({ fn }) => ['status', fn.countAll<number>().as('count')]).where('id', 'in', ids).groupBy('status').execute()
    expect(states).toEqual([{ status: 'DISPATCHED', count: 400 }])
  })
})
