import { describe, expect, it } from 'vitest'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../dispatch-fixtures.js'
import { useDispatchTestBed } from '../dispatch-test-bed.js'

/** Every recipient of `smsId` that the fake sent, by index: each must appear once. */
function acceptedCounts(sent: { customFields: Record<string, string> }[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const message of sent) counts[message.customFields.svcRecipient!] = (counts[message.customFields.svcRecipient!] ?? 0) + 1
  return counts
}

describe('exactly-once hand-over', () => {
  const bed = useDispatchTestBed(6)
  const { dispatcher, extsms, sentFor } = bed

  const makeDue = (smsId: number) =>
    bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date(Date.now() - 1000) }).where('id', '=', smsId).execute()

  it('a provider that answers the send after the time limit: the next attempt reads the group back and sends nothing again', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ timeoutMs: 1500, phase: 'send' }, 1)
    await dispatcher({ provider: extsms(300) }).runOnce()
    const unresolved = await messageState(bed.iso.owner, smsId)
    expect(unresolved).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })
    expect(unresolved.lastProviderError).toMatch(/sending group G4V\w+: no answer/)
    expect(acceptedCounts(sentFor(smsId))).toEqual({ 0: 1, 1: 1 })

    await makeDue(smsId)
    await dispatcher({ provider: extsms(300) }).runOnce()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 2 })
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['DISPATCHED', 'DISPATCHED'])
    expect(state.recipients.map((recipient) => recipient.providerMessageId)).toEqual(sentFor(smsId).map((message) => message.messageId))
    expect(acceptedCounts(sentFor(smsId))).toEqual({ 0: 1, 1: 1 })
  })
})
