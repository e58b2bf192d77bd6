import { describe, expect, it } from 'vitest'
import { createExtSmsProvider } from '../../../lib/dispatch/providers/extsms.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../../support/dispatch-fixtures.js'
import { fakeExtSmsCredentials, useDispatchTestBed } from '../dispatch-test-bed.js'

/**
 * The official SDK declares the `customFields` echo optional in the answers' entries (docs/provider.md#answers). Without it the recipients must still be told apart, or a refused one stays PENDING
 * and is sent again until its attempts run out.
 */
describe('extsms answers without the customFields echo, through the dispatcher', () => {
  const bed = useDispatchTestBed(4)
  const guardian = '01055550000'

  const callsFor = (smsId: number) =>
    bed.fake.requests.filter((request) => request.body.messages[0]?.customFields.svcSmsId === String(smsId))

  /** The live adapter, keeping the provider's answers to its add calls as they came over the wire. */
  function recordingAdapter(answers: unknown[]) {
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      if (init?.method === 'PUT') answers.push(await response.clone().json())
      return response
    }
    return createExtSmsProvider({ ...fakeExtSmsCredentials, baseUrl: bed.fake.url, timeoutMs: 2000, fetch: recording })
  }

  /** One dispatch pass over a new message whose `refused` recipients the fake refuses, answering without the echo. */
  async function sendOnce(recipients: { phone: string; name: string }[], refused: (svcRecipient: string) => boolean) {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, { ...tenant, recipients })
    bed.fake.fail({ refuse: (message) => (refused(message.customFields.svcRecipient!) ? '1062' : null), omitCustomFields: true })
    const answers: unknown[] = []
    await bed.dispatcher({ provider: recordingAdapter(answers) }).runOnce()
    return { smsId, answers }
  }

  it('fails the refused recipient and dispatches the others after one call, and never sends them again', async () => {
    const { smsId, answers } = await sendOnce(
      [
        { phone: guardian, name: 'Kim' },
        { phone: guardian, name: 'Lee' },
        { phone: '01098765432', name: 'Park' },
      ],
      (recipient) => recipient === '2',
    )

    expect(answers).toHaveLength(1)
    const answer = answers[0] as { errorCount: number; resultList: object[] }
    expect(answer.errorCount).toBe(1)
    expect(answer.resultList).toEqual([
      expect.objectContaining({ to: guardian, from: '0212345678', type: 'SMS', country: '82', statusCode: '2000' }),
      expect.objectContaining({ to: guardian, from: '0212345678', type: 'SMS', country: '82', statusCode: '2000' }),
      expect.objectContaining({ to: '01098765432', statusCode: '1062', messageId: expect.stringMatching(/^M4V/), accountId: expect.any(String) }),
    ])
    for (const entry of answer.resultList) expect(entry).not.toHaveProperty('customFields')

    const sent = bed.sentFor(smsId)
    expect(sent).toHaveLength(2)
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, failCount: 1, providerGroupId: sent[0]!.groupId })
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerMessageId, recipient.providerStatusCode])).toEqual([
      ['DISPATCHED', sent[0]!.messageId, '2000'],
      ['DISPATCHED', sent[1]!.messageId, '2000'],
      // The provider names even a refused message; its id is kept for reconciling.
      ['FAILED', expect.stringMatching(/^M4V/), '1062'],
    ])
    expect(sent[0]!.messageId).not.toBe(sent[1]!.messageId)

    // Due again: a recipient left unconfirmed would be claimed and sent a second time.
    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date() }).where('id', '=', smsId).execute()
    await bed.dispatcher().runOnce()
    expect(callsFor(smsId)).toHaveLength(1)
  })

  it('reads back a group whose send answer was lost, SDK-shaped, and records each sibling once without sending again', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    // The text is personalised ('Hello {name}'): the emoji makes the provider refuse that SMS at the add (1029).
    const recipients = [
      { phone: guardian, name: 'Kim' },
      { phone: guardian, name: 'Lee 😀' },
      { phone: '01098765432', name: 'Park' },
    ]
    const smsId = await insertPendingMessage(bed.iso.owner, { ...tenant, recipients })
    bed.fake.fail({ timeoutMs: 5_000, phase: 'send' }, 1)
    await bed.dispatcher({ provider: bed.extsms(300) }).runOnce()
    const open = await messageState(bed.iso.owner, smsId)
    expect(open).toMatchObject({ status: 'PENDING', lastProviderError: expect.stringContaining(bed.sentFor(smsId)[0]!.groupId) })

    // The next holder reads the group back, and the provider lists its messages without the echo.
    bed.fake.fail({ refuse: () => null, omitCustomFields: true })
    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date() }).where('id', '=', smsId).execute()
    await bed.dispatcher().runOnce()

    const sent = bed.sentFor(smsId)
    expect(sent.map((message) => message.customFields.svcRecipient)).toEqual(['0', '2'])
    expect(callsFor(smsId)).toHaveLength(1)
    const readBack = bed.fake.calls.filter((call) => call.phase === 'read' && call.path.includes(sent[0]!.groupId))
    expect(readBack.map((call) => call.status)).toEqual([200, 200])
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', failCount: 1, providerGroupId: sent[0]!.groupId })
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerMessageId, recipient.providerStatusCode])).toEqual([
      ['DISPATCHED', sent[0]!.messageId, '2000'],
      ['FAILED', expect.stringMatching(/^M4V/), '1029'],
      ['DISPATCHED', sent[1]!.messageId, '2000'],
    ])
  })

  it('tells apart siblings sharing a phone when one of them is refused', async () => {
    const { smsId } = await sendOnce(
      [
        { phone: guardian, name: 'Kim' },
        { phone: guardian, name: 'Lee' },
      ],
      (recipient) => recipient === '1',
    )

    const [accepted] = bed.sentFor(smsId)
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, failCount: 1 })
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerMessageId])).toEqual([
      ['DISPATCHED', accepted!.messageId],
      ['FAILED', expect.stringMatching(/^M4V/)],
    ])
    expect(callsFor(smsId)).toHaveLength(1)
  })
})
