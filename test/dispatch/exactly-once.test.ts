import { afterEach, describe, expect, it } from 'vitest'
import { applyDeliveryReports } from '../../lib/dispatch/delivery/apply-reports.js'
import { parseDeliveryReport } from '../../lib/dispatch/delivery/delivery-report.js'
import type { DispatcherOptions } from '../../lib/dispatch/dispatcher.js'
import { deliveryReport, type FakeFault, type FakePhase } from '../support/fakes/extsms-server.js'
import { until as untilWithin } from '../support/auth-fixtures.js'
import { insertPendingAlimtalk, insertPendingMessage, insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { startDispatchInstance } from './dispatch-instance.js'
import { fakeExtSmsCredentials, useDispatchTestBed } from './dispatch-test-bed.js'
import { itPostgres } from '../support/helper.js'
import { acceptedCounts, betweenPhases, capturedLog, databaseBehindProxy, markedExtSms, openGroupOf, phasesOf } from './hand-over-faults.js'

// Leases and held answers take seconds: a longer deadline than the fixtures' default.
const until = (check: () => boolean | Promise<boolean>) => untilWithin(check, 15_000)

/**
 * Each test breaks one hand-over where its outcome cannot be known (an answer after the time limit, a kill -9, a
 * database cut off longer than the lease) and ends with every recipient sent exactly once by the fake and the
 * message settled by what the provider did, read back from its group.
 */
describe('exactly-once hand-over', () => {
  const bed = useDispatchTestBed(6)
  const { extsms, sentFor } = bed
  const LEASE_SECONDS = 2
  // A call may start only while the lease outlasts its time limit by a second: below 1 s for a 2 s lease.
  const CALL_TIMEOUT_MS = 500

  const dispatcher = (overrides: Partial<DispatcherOptions> = {}) =>
    bed.dispatcher({ provider: extsms(CALL_TIMEOUT_MS), leaseSeconds: LEASE_SECONDS, ...overrides })

  // A test that fails midway must not leave due work for the next one's dispatchers (they claim every tenant's).
  afterEach(async () => {
    await bed.iso.owner.updateTable('smsMessages').set({ status: 'CANCELLED' }).where('status', '=', 'PENDING').execute()
  })

  const insertMessage = async () => insertPendingMessage(bed.iso.owner, await insertTenantAndSender(bed.iso.owner))

  /** The retry's backoff, skipped. */
  const makeDue = (smsId: number) =>
    bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date(Date.now() - 1000) }).where('id', '=', smsId).execute()

  const groupsBefore = () => new Set(bed.fake.groups.keys())
  const groupsSince = (before: Set<string>) => [...bed.fake.groups.keys()].filter((groupId) => !before.has(groupId))
  const groupIdOfPath = (path: string) => decodeURIComponent(/\/groups\/([^/?]+)/.exec(path)![1]!)

  /** Dispatches until the message leaves PENDING, as the scheduler's passes would (after the lease, if held). */
  async function settle(engine: { runOnce(): Promise<number> }, smsId: number) {
    await until(async () => {
      await engine.runOnce()
      return (await messageState(bed.iso.owner, smsId)).status !== 'PENDING'
    })
  }

  /** Settled DISPATCHED: each recipient once at the fake, its row carrying the id of the message the fake sent. */
  async function expectSentOnce(smsId: number, attempts: number) {
    expect(acceptedCounts(sentFor(smsId))).toEqual({ 0: 1, 1: 1 })
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: attempts, claimToken: null })
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerMessageId])).toEqual(
      sentFor(smsId).map((message) => ['DISPATCHED', message.messageId]),
    )
    expect(await openGroupOf(bed.iso.owner, smsId)).toBeNull()
    return state
  }

  const slowPhases: {
    phase: FakePhase
    error: RegExp
    /** What the first attempt left at the fake and in the database. */
    left: (groupId: string, smsId: number) => void
  }[] = [
    {
      phase: 'create',
      error: /no answer from the provider/,
      left: (groupId, smsId) => {
        expect(bed.fake.groups.get(groupId)).toMatchObject({ status: 'PENDING', messages: [] })
        expect(sentFor(smsId)).toEqual([])
      },
    },
    {
      phase: 'add',
      error: /adding to group G4V\w+: no answer/,
      left: (groupId, smsId) => {
        const group = bed.fake.groups.get(groupId)!
        expect(group.status).toBe('PENDING')
        expect(group.messages.map((message) => message.customFields.svcRecipient)).toEqual(['0', '1'])
        expect(sentFor(smsId)).toEqual([])
      },
    },
    {
      phase: 'send',
      error: /sending group G4V\w+: no answer/,
      left: (groupId, smsId) => {
        expect(bed.fake.groups.get(groupId)!.status).toBe('SENDING')
        expect(acceptedCounts(sentFor(smsId))).toEqual({ 0: 1, 1: 1 })
      },
    },
  ]

  it.each(slowPhases)('a provider that answers the $phase after the time limit: the next attempt reads back and sends each recipient once', async ({ phase, error, left }) => {
    const smsId = await insertMessage()
    const before = groupsBefore()
    // The call takes effect at once; its answer comes after the adapter gave up.
    bed.fake.fail({ timeoutMs: CALL_TIMEOUT_MS + 1000, phase }, 1)
    await dispatcher().runOnce()
    const [firstGroup, ...others] = groupsSince(before)
    expect(others).toEqual([])
    const unresolved = await messageState(bed.iso.owner, smsId)
    expect(unresolved).toMatchObject({ status: 'PENDING', dispatchAttempts: 1, claimToken: null })
    expect(unresolved.lastProviderError).toMatch(error)
    expect(unresolved.recipients.every((recipient) => recipient.deliveryStatus === 'PENDING' && recipient.providerMessageId === null)).toBe(true)
    // A group whose id never came back was never recorded, and nothing can be sent through it: a new one is used.
    expect(await openGroupOf(bed.iso.owner, smsId)).toBe(phase === 'create' ? null : firstGroup)
    left(firstGroup!, smsId)

    await makeDue(smsId)
    const calls = bed.fake.calls.length
    await dispatcher().runOnce()
    const state = await expectSentOnce(smsId, 2)
    const sentGroups = [...new Set(sentFor(smsId).map((message) => message.groupId))]
    if (phase === 'create') {
      // The orphan stays empty and unsent; the second attempt's group carried the messages.
      expect(groupsSince(before)).toHaveLength(2)
      expect(sentGroups).toEqual(groupsSince(before).filter((groupId) => groupId !== firstGroup))
      expect(bed.fake.groups.get(firstGroup!)).toMatchObject({ status: 'PENDING', messages: [] })
    } else {
      // The open group was read back: the one group was used throughout and nothing new was created.
      expect(groupsSince(before)).toEqual([firstGroup])
      expect(sentGroups).toEqual([firstGroup])
      const phases = bed.fake.calls.slice(calls).map((call) => call.phase)
      expect(phases).not.toContain('create')
      expect(phases).not.toContain('add')
      expect(phases.filter((each) => each === 'send')).toHaveLength(phase === 'add' ? 1 : 0)
    }
    expect(state.providerGroupId).toBe(sentGroups[0])
  })

  /** A dispatcher in a child process, killed with SIGKILL when `phase`'s call arrives under `fault`. */
  async function killedAt(phase: FakePhase, fault: FakeFault) {
    bed.fake.fail(fault, 1)
    const arrived = bed.fake.arrival(phase)
    const doomed = startDispatchInstance({
      databaseUrl: bed.iso.url,
      providerUrl: bed.fake.url,
      credentials: fakeExtSmsCredentials,
      leaseSeconds: LEASE_SECONDS,
      providerTimeoutMs: CALL_TIMEOUT_MS,
      concurrency: 1,
      maxAttempts: 3,
    })
    try {
      const call = await arrived
      return groupIdOfPath(call.path)
    } finally {
      await doomed.kill()
    }
  }

  itPostgres('kill -9 after the group was sent, before it was recorded: the next holder reads it back and records it', async () => {
    const smsId = await insertMessage()
    const before = groupsBefore()
    // The send takes effect on arrival; its answer is held, and the instance dies waiting for it.
    const groupId = await killedAt('send', { timeoutMs: 60_000, phase: 'send' })
    expect(bed.fake.groups.get(groupId)!.status).toBe('SENDING')
    expect(await openGroupOf(bed.iso.owner, smsId)).toBe(groupId)
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })

    const calls = bed.fake.calls.length
    await settle(dispatcher({ provider: markedExtSms(bed.fake.url, 'next', CALL_TIMEOUT_MS) }), smsId)
    const state = await expectSentOnce(smsId, 2)
    expect(state.providerGroupId).toBe(groupId)
    expect(groupsSince(before)).toEqual([groupId])
    expect(new Set(phasesOf(bed.fake.calls.slice(calls), 'next'))).toEqual(new Set(['read']))
  })

  itPostgres('an AlimTalk message killed -9 between its send and its record: every notice delivered once, as ATA', async () => {
    const content = '#{name} 학생 출석 확인'
    bed.fake.kakao.putTemplate({ templateId: 'KA01TP', channelId: 'KA01PF', name: 'attendance', content, status: 'APPROVED' })
    const smsId = await insertPendingAlimtalk(bed.iso.owner, await insertTenantAndSender(bed.iso.owner), {
      content,
      recipients: [
        { phone: '01012345678', variables: { name: '김민준' } },
        { phone: '01098765432', variables: { name: '이서연' } },
      ],
    })
    const groupId = await killedAt('send', { timeoutMs: 60_000, phase: 'send' })
    expect(bed.fake.groups.get(groupId)!.status).toBe('SENDING')
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })

    await settle(dispatcher(), smsId)
    await expectSentOnce(smsId, 2)
    expect(sentFor(smsId).map((message) => [message.type, message.text])).toEqual([
      ['ATA', '김민준 학생 출석 확인'],
      ['ATA', '이서연 학생 출석 확인'],
    ])
    const reports = sentFor(smsId).map((message) => parseDeliveryReport(bed.fake.reportOf(message)))
    expect(await applyDeliveryReports(bed.database.db, reports)).toEqual({ processed: 2, ignored: 0 })
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'SENT', successCount: 2 })
  })

  itPostgres('a crash between creating the group and adding to it: the next holder adds to that same group and sends it', async () => {
    const smsId = await insertMessage()
    const before = groupsBefore()
    // The add never takes effect: the instance dies first.
    const groupId = await killedAt('add', { hang: true, phase: 'add' })
    expect(bed.fake.groups.get(groupId)).toMatchObject({ status: 'PENDING', messages: [] })
    expect(await openGroupOf(bed.iso.owner, smsId)).toBe(groupId)

    const calls = bed.fake.calls.length
    await settle(dispatcher({ provider: markedExtSms(bed.fake.url, 'next', CALL_TIMEOUT_MS) }), smsId)
    await expectSentOnce(smsId, 2)
    expect(groupsSince(before)).toEqual([groupId])
    expect(new Set(sentFor(smsId).map((message) => message.groupId))).toEqual(new Set([groupId]))
    expect(phasesOf(bed.fake.calls.slice(calls), 'next').filter((phase) => phase !== 'read')).toEqual(['add', 'send'])
  })

  itPostgres('a crash between adding and sending: the next holder sends the group the messages are in', async () => {
    const smsId = await insertMessage()
    const before = groupsBefore()
    const groupId = await killedAt('send', { hang: true, phase: 'send' })
    const group = bed.fake.groups.get(groupId)!
    expect(group.status).toBe('PENDING')
    expect(group.messages).toHaveLength(2)
    expect(sentFor(smsId)).toEqual([])

    const calls = bed.fake.calls.length
    await settle(dispatcher({ provider: markedExtSms(bed.fake.url, 'next', CALL_TIMEOUT_MS) }), smsId)
    await expectSentOnce(smsId, 2)
    expect(groupsSince(before)).toEqual([groupId])
    // The messages the dead instance added, with the ids it was given.
    expect(sentFor(smsId).map((message) => message.messageId)).toEqual(group.messages.map((message) => message.messageId))
    expect(phasesOf(bed.fake.calls.slice(calls), 'next').filter((phase) => phase !== 'read')).toEqual(['send'])
  })

  itPostgres('a partition longer than the lease: the other instance resolves the sent group, and the cut-off one logs it when its record finds the claim lost', async () => {
    const smsId = await insertMessage()
    const [a, b] = [`A-${smsId}`, `B-${smsId}`]
    const cutOff = await databaseBehindProxy(bed.iso.url)
    const { log, lines, has } = capturedLog()
    let cutAt = -1
    // The group is sent; the database goes away before the answer is recorded.
    const provider = betweenPhases(markedExtSms(bed.fake.url, a, CALL_TIMEOUT_MS), ({ phase }) => {
      if (phase !== 'send') return
      cutOff.proxy.freeze()
      cutAt = bed.fake.calls.length
    })
    const cutOffInstance = dispatcher({ db: cutOff.database.db, provider, log })
    try {
      const pass = cutOffInstance.runOnce()
      await until(() => cutAt >= 0 && has('could not record the provider outcome; retrying the write, not the send'))
      const [sent] = sentFor(smsId)
      expect(acceptedCounts(sentFor(smsId))).toEqual({ 0: 1, 1: 1 })

      // B reaches the database directly and takes the message once A's lease has lapsed.
      await settle(dispatcher({ provider: markedExtSms(bed.fake.url, b, CALL_TIMEOUT_MS) }), smsId)
      const state = await expectSentOnce(smsId, 2)
      expect(state.providerGroupId).toBe(sent!.groupId)

      cutOff.proxy.thaw()
      await until(() => has('dispatch claim lost before the outcome was recorded: the next holder reads its groups back'))
      await pass
      const lost = lines.find((line) => line.msg.startsWith('dispatch claim lost'))!
      expect(lost).toMatchObject({ level: 40, smsId, attempt: 1, groups: [sent!.groupId] })
      // B's record stands: A's late outcome wrote nothing.
      expect(await messageState(bed.iso.owner, smsId)).toEqual(state)
      expect(acceptedCounts(sentFor(smsId))).toEqual({ 0: 1, 1: 1 })
      // After the cut, A called the provider no more: every later call is B's read-back.
      expect(phasesOf(bed.fake.calls, a)).toEqual(['create', 'add', 'send'])
      expect(bed.fake.calls.slice(cutAt).every((call) => call.headers['x-test-instance'] === b && call.phase === 'read')).toBe(true)
    } finally {
      cutOff.proxy.thaw()
      await cutOffInstance.stop()
      await cutOff.close()
    }
  })

  itPostgres('an instance that cannot renew its lease stops before its next provider call and says so', async () => {
    const smsId = await insertMessage()
    const cutOff = await databaseBehindProxy(bed.iso.url)
    const { log, lines, has } = capturedLog()
    const [a, b] = [`A-${smsId}`, `B-${smsId}`]
    let addedTo: string | null = null
    // Cut after the messages were added; the answer is handed back once a renewal has failed, the lease in doubt.
    const provider = betweenPhases(markedExtSms(bed.fake.url, a, CALL_TIMEOUT_MS), async ({ phase, groupId }) => {
      if (phase !== 'add') return
      addedTo = groupId
      cutOff.proxy.freeze()
      await until(() => has('could not renew the dispatch lease'))
    })
    const cutOffInstance = dispatcher({ db: cutOff.database.db, provider, log })
    try {
      const pass = cutOffInstance.runOnce()
      await until(() => has('dispatch attempt stopped before its next provider call') || phasesOf(bed.fake.calls, a).length > 2)
      expect(phasesOf(bed.fake.calls, a)).toEqual(['create', 'add'])
      await pass
      const stopped = lines.find((line) => line.msg === 'dispatch attempt stopped before its next provider call')
      expect(stopped).toMatchObject({ level: 40, smsId, attempt: 1, groups: [addedTo] })
      expect(stopped!.reason).toMatch(/lease/)
      expect(bed.fake.groups.get(addedTo!)).toMatchObject({ status: 'PENDING' })
      expect(sentFor(smsId)).toEqual([])
      // It wrote nothing after the cut: the group it recorded before adding stays open for the next holder.
      cutOff.proxy.thaw()
      expect(await openGroupOf(bed.iso.owner, smsId)).toBe(addedTo)
      expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })

      const calls = bed.fake.calls.length
      await settle(dispatcher({ provider: markedExtSms(bed.fake.url, b, CALL_TIMEOUT_MS) }), smsId)
      await expectSentOnce(smsId, 2)
      expect(new Set(sentFor(smsId).map((message) => message.groupId))).toEqual(new Set([addedTo]))
      expect(phasesOf(bed.fake.calls.slice(calls), b).filter((phase) => phase !== 'read')).toEqual(['send'])
      expect(phasesOf(bed.fake.calls, a)).toEqual(['create', 'add'])
    } finally {
      cutOff.proxy.thaw()
      await cutOffInstance.stop()
      await cutOff.close()
    }
  })

  it('a read-back that fails keeps the message PENDING with its group open, and a later attempt resolves it', async () => {
    const smsId = await insertMessage()
    bed.fake.fail({ timeoutMs: CALL_TIMEOUT_MS + 1000, phase: 'send' }, 1)
    await dispatcher().runOnce()
    const groupId = await openGroupOf(bed.iso.owner, smsId)
    expect(groupId).not.toBeNull()

    await makeDue(smsId)
    bed.fake.fail({ status: 503, phase: 'read' }, 1)
    await dispatcher().runOnce()
    const unread = await messageState(bed.iso.owner, smsId)
    expect(unread).toMatchObject({ status: 'PENDING', dispatchAttempts: 2 })
    expect(unread.lastProviderError).toMatch(new RegExp(`group ${groupId} could not be read back`))
    expect(unread.recipients.every((recipient) => recipient.deliveryStatus === 'PENDING')).toBe(true)
    expect(await openGroupOf(bed.iso.owner, smsId)).toBe(groupId)

    await makeDue(smsId)
    await dispatcher().runOnce()
    expect((await expectSentOnce(smsId, 3)).providerGroupId).toBe(groupId)
  })

  it('attempts run out while the group is open: the message is resolved by reading the group back, never ended FAILED unread', async () => {
    const smsId = await insertMessage()
    const engine = () => dispatcher({ maxAttempts: 2 })
    bed.fake.fail({ timeoutMs: CALL_TIMEOUT_MS + 1000, phase: 'send' }, 1)
    await engine().runOnce()
    const groupId = await openGroupOf(bed.iso.owner, smsId)

    // The last attempt's read-back fails too: still PENDING, still open.
    await makeDue(smsId)
    bed.fake.fail({ status: 503, phase: 'read' }, 1)
    await engine().runOnce()
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 2 })
    expect(await openGroupOf(bed.iso.owner, smsId)).toBe(groupId)

    // No attempt left to send anything: the claim only reads the group back, which was sent.
    await makeDue(smsId)
    const calls = bed.fake.calls.length
    await engine().runOnce()
    expect((await expectSentOnce(smsId, 2)).providerGroupId).toBe(groupId)
    expect(new Set(bed.fake.calls.slice(calls).map((call) => call.phase))).toEqual(new Set(['read']))
  })

  itPostgres('a free worker claims work that fell due while another attempt waits for the provider', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const first = await insertPendingMessage(bed.iso.owner, tenant)
    let held = false
    let release!: () => void
    const answer = new Promise<void>((resolve) => {
      release = resolve
    })
    // The first message's create is answered, and the answer held until the test lets it through.
    const provider = betweenPhases(extsms(CALL_TIMEOUT_MS), async ({ phase, smsId }) => {
      if (phase !== 'create' || smsId !== first) return
      held = true
      await answer
    })
    const engine = dispatcher({ provider, concurrency: 2 })
    try {
      engine.kick()
      await until(() => held)
      // Due only now, after the first was claimed: one more claim has to find it.
      const second = await insertPendingMessage(bed.iso.owner, tenant)
      engine.kick()
      await untilWithin(async () => (await messageState(bed.iso.owner, second)).status === 'DISPATCHED', 5000)
      expect(acceptedCounts(sentFor(second))).toEqual({ 0: 1, 1: 1 })
      expect(await messageState(bed.iso.owner, first)).toMatchObject({ status: 'PENDING' })
      expect(sentFor(first)).toEqual([])
      release()
      await until(async () => (await messageState(bed.iso.owner, first)).status === 'DISPATCHED')
      await expectSentOnce(first, 1)
    } finally {
      release()
      await engine.stop()
    }
  })

  it('an early delivery report naming the open group settles its recipient; one naming another group is ignored', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    const live = extsms(CALL_TIMEOUT_MS)
    const other = await live.createGroup({ tenantSlug: tenant.slug, smsId, kind: 'STAFF' })
    if (other.kind !== 'ok') throw new Error('no group')
    let applied: { processed: number; ignored: number } | null = null
    // Reports that come before the dispatcher records its send: the recipients are PENDING, with no ids stored yet.
    const provider = betweenPhases(live, async ({ phase, groupId }) => {
      if (phase !== 'send') return
      const [kim, lee] = bed.fake.groups.get(groupId!)!.messages
      applied = await applyDeliveryReports(
        bed.database.db,
        [deliveryReport(kim!), deliveryReport({ ...lee!, groupId: other.groupId })].map(parseDeliveryReport),
      )
    })
    await dispatcher({ provider }).runOnce()
    expect(applied).toEqual({ processed: 1, ignored: 1 })
    const sent = sentFor(smsId)
    expect(acceptedCounts(sent)).toEqual({ 0: 1, 1: 1 })
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, successCount: 1, providerGroupId: sent[0]!.groupId })
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerMessageId, recipient.providerStatusCode])).toEqual([
      ['DELIVERED', sent[0]!.messageId, '4000'],
      ['DISPATCHED', sent[1]!.messageId, '2000'],
    ])
  })
})
