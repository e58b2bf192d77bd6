import pg from 'pg'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect } from 'vitest'
import { claimDueMessages } from '../../db/repos/dispatch/dispatch.js'
import type { DispatcherOptions } from '../../lib/dispatch/dispatcher.js'
import { until as untilWithin } from '../support/auth-fixtures.js'
import { withDatabase } from '../support/database-url.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { startDispatchInstance, type InstanceConfig } from './dispatch-instance.js'
import { fakeExtSmsCredentials, useDispatchTestBed } from './dispatch-test-bed.js'
import { itPostgres } from '../support/helper.js'
import { acceptedCounts, betweenPhases, capturedLog, markedExtSms, openGroupOf, phasesOf } from './hand-over-faults.js'

// Leases, held provider answers and child processes take seconds, many more on a busy two-core machine running
// three test files at once (CI): deadlines far beyond what the waits take on a quiet one.
const until = (check: () => boolean | Promise<boolean>) => untilWithin(check, 30_000)
const TEST_TIMEOUT_MS = 90_000

/**
 * A call may start only while the lease outlasts its time limit by a second. The time limit is generous, so that a
 * call slowed by a busy machine is not retried (a second create in the tests' records) unless a test means it to be.
 */
const LEASE_SECONDS = 4
const CALL_TIMEOUT_MS = 2_500

// Killed processes, a database that refuses connections: all of it needs a real PostgreSQL server.
describe('dispatch leases under faults', () => {
  const bed = useDispatchTestBed(6)
  const { extsms, sentFor } = bed

  const dispatcher = (overrides: Partial<DispatcherOptions> = {}) =>
    bed.dispatcher({ provider: extsms(CALL_TIMEOUT_MS), leaseSeconds: LEASE_SECONDS, ...overrides })

  function instance(overrides: Partial<InstanceConfig>) {
    return startDispatchInstance({
      databaseUrl: bed.iso.url,
      providerUrl: bed.fake.url,
      credentials: fakeExtSmsCredentials,
      leaseSeconds: 5,
      concurrency: 2,
      maxAttempts: 3,
      ...overrides,
    })
  }

  /** Add calls that carried this message, answered or not. */
  const callsFor = (smsId: number) =>
    bed.fake.received.filter((request) => request.body.messages[0]?.customFields.svcSmsId === String(smsId)).length

  const insertMessages = async (count: number) => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const ids: number[] = []
    for (let i = 0; i < count; i++) ids.push(await insertPendingMessage(bed.iso.owner, tenant))
    return ids
  }

  /**
   * A provider whose group is sent, and a database that goes down right after that send, before its outcome is
   * recorded: every connection is dropped and new ones are refused (as during a restart) until `restore()`. The
   * dispatcher's warnings and errors land in `lines`; its calls are marked `instance`.
   */
  async function outageAfterSend(instance: string) {
    const databaseName = new URL(bed.iso.ownerUrl).pathname.slice(1)
    const admin = new pg.Client({ connectionString: withDatabase(bed.iso.ownerUrl, 'postgres') })
    await admin.connect()
    const { log, lines, has } = capturedLog()
    let down = false
    const provider = betweenPhases(markedExtSms(bed.fake.url, instance, CALL_TIMEOUT_MS), async ({ phase }) => {
      if (phase !== 'send' || down) return
      down = true
      await admin.query(`alter database ${databaseName} allow_connections false`)
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [databaseName])
    })
    const restore = () => admin.query(`alter database ${databaseName} allow_connections true`)
    return {
      provider,
      log,
      lines,
      has,
      restore,
      async end() {
        await restore()
        await admin.end()
      },
    }
  }

  itPostgres('a killed instance strands only what it had handed to the provider, for one lease, and none of it is sent twice', async () => {
    const ids = await insertMessages(5)
    // Both workers' groups are sent; the answers are held, and the instance dies waiting for them.
    bed.fake.fail({ timeoutMs: 60_000, phase: 'send' }, 2)
    const doomed = instance({ concurrency: 2 })
    try {
      await until(() => bed.fake.holding() === 2)
    } finally {
      await doomed.kill()
    }
    await until(() => bed.fake.holding() === 0)
    bed.fake.reset()
    const handed = ids.filter((id) => callsFor(id) === 1)
    const untouched = ids.filter((id) => callsFor(id) === 0)
    expect(handed).toHaveLength(2)
    for (const id of handed) expect(acceptedCounts(sentFor(id))).toEqual({ 0: 1, 1: 1 })

    // One pass of another instance, right after the death, sends everything the dead one never handed over.
    await dispatcher().runOnce()
    for (const id of untouched) {
      expect(await messageState(bed.iso.owner, id)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1 })
    }

    // Once the dead instance's lease has run out, its sent groups are read back, not sent again.
    const survivor = dispatcher()
    await until(async () => {
      await survivor.runOnce()
      const states = await Promise.all(handed.map((id) => messageState(bed.iso.owner, id)))
      return states.every((state) => state.status === 'DISPATCHED')
    })
    for (const id of ids) {
      expect(callsFor(id)).toBe(1)
      expect(acceptedCounts(sentFor(id))).toEqual({ 0: 1, 1: 1 })
    }
    for (const id of handed) {
      const state = await messageState(bed.iso.owner, id)
      // The dead instance's attempt counted: the provider had been called.
      expect(state.dispatchAttempts).toBe(2)
      expect(state.recipients.map((recipient) => recipient.providerMessageId)).toEqual(sentFor(id).map((message) => message.messageId))
    }
  }, TEST_TIMEOUT_MS)

  itPostgres('keeps its lease alive while an attempt outlasts it, so no other instance takes the message', async () => {
    const [smsId] = await insertMessages(1)
    // Each call answers within its time limit, the three together after more than a lease.
    let calling = false
    // A lease of 6 s is renewed about every 2 s: only a renewal more than 4 s late would lose it. Without renewals
    // the lease runs out more than a second before the attempt ends.
    const slow = betweenPhases(extsms(3_000), () => {
      calling = true
      return sleep(2_400)
    })
    const first = dispatcher({ provider: slow, leaseSeconds: 6 })
    const second = dispatcher({ provider: markedExtSms(bed.fake.url, `other-${smsId}`, CALL_TIMEOUT_MS), leaseSeconds: 6 })
    let finished = false
    const running = first.runOnce().finally(() => {
      finished = true
    })
    // Once the first holds the message, the other keeps looking for due work for as long as the slow attempt lasts.
    await until(() => calling)
    while (!finished) {
      await second.runOnce()
      await sleep(100)
    }
    await running
    expect(phasesOf(bed.fake.calls, `other-${smsId}`)).toEqual([])
    expect(callsFor(smsId!)).toBe(1)
    expect(acceptedCounts(sentFor(smsId!))).toEqual({ 0: 1, 1: 1 })
    expect(await messageState(bed.iso.owner, smsId!)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, claimToken: null })
  }, TEST_TIMEOUT_MS)

  itPostgres('counts an attempt when the provider is called, so a message that keeps killing its instance before anything was added ends FAILED', async () => {
    const [smsId] = await insertMessages(1)
    // The create never takes effect: each instance dies before any group exists.
    bed.fake.fail({ hang: true, phase: 'create' }, 2)
    for (let attempt = 1; attempt <= 2; attempt++) {
      const arrived = bed.fake.arrival('create')
      const doomed = instance({ concurrency: 1, leaseSeconds: LEASE_SECONDS, maxAttempts: 2 })
      try {
        await arrived
      } finally {
        await doomed.kill()
      }
      expect(await messageState(bed.iso.owner, smsId!)).toMatchObject({ status: 'PENDING', dispatchAttempts: attempt })
    }
    bed.fake.reset()

    const next = dispatcher({ maxAttempts: 2 })
    await until(async () => {
      await next.runOnce()
      return (await messageState(bed.iso.owner, smsId!)).status !== 'PENDING'
    })
    const state = await messageState(bed.iso.owner, smsId!)
    expect(state).toMatchObject({ status: 'FAILED', dispatchAttempts: 2, claimToken: null, failCount: 2 })
    expect(state.recipients.every((recipient) => recipient.deliveryStatus === 'FAILED')).toBe(true)
    // No group was ever recorded: nothing could have gone out.
    expect(callsFor(smsId!)).toBe(0)
    expect(sentFor(smsId!)).toEqual([])
  }, TEST_TIMEOUT_MS)

  itPostgres('records an outcome whose first recording failed (database restart) without calling the provider again', async () => {
    const [smsId] = await insertMessages(1)
    const marked = `restart-${smsId}`
    const outage = await outageAfterSend(marked)
    // The runtime pool as the service opens it: a checked-out connection whose server goes away must not end the
    // process (db/driver/pg-client.ts listens for that).
    const runtime = bed.iso.open(4)
    const engine = dispatcher({ db: runtime.db, provider: outage.provider, log: outage.log })
    try {
      const pass = engine.runOnce()
      await until(() => outage.has('could not record the provider outcome; retrying the write, not the send'))
      await outage.restore()
      await pass
    } finally {
      await outage.end()
      await runtime.close()
    }
    expect(phasesOf(bed.fake.calls, marked)).toEqual(['create', 'add', 'send'])
    expect(acceptedCounts(sentFor(smsId!))).toEqual({ 0: 1, 1: 1 })
    const state = await messageState(bed.iso.owner, smsId!)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, claimToken: null })
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerMessageId])).toEqual(
      sentFor(smsId!).map((message) => ['DISPATCHED', message.messageId]),
    )
  }, TEST_TIMEOUT_MS)

  itPostgres('on stop, gives up recording an outcome the database will not take after its grace, logs it with its group, and the next holder reads that group back', async () => {
    const [smsId] = await insertMessages(1)
    // The database stays down past the shutdown.
    const outage = await outageAfterSend(`stopped-${smsId}`)
    const { lines } = outage
    const runtime = bed.iso.open(4)
    // Patience far beyond the test's own time limit: only the grace can end the wait.
    const engine = dispatcher({ db: runtime.db, provider: outage.provider, log: outage.log, recordPatienceSeconds: 3600, recordGraceOnStopMs: 500 })
    try {
      const pass = engine.runOnce()
      await until(() => outage.has('could not record the provider outcome; retrying the write, not the send'))
      // Without the grace, stop() waits out the patience and the process's close timeout kills it mid-retry, with
      // nothing in the log but the warnings.
      await engine.stop()
      await pass
    } finally {
      await outage.end()
      await runtime.close()
    }
    const sent = sentFor(smsId!)
    const givenUp = lines.find((line) => line.level === 50 && /given up unrecorded/.test(line.msg))
    expect(givenUp).toMatchObject({ smsId, attempt: 1, groups: [sent[0]!.groupId], outcome: { rest: { kind: 'none' }, sentGroupId: sent[0]!.groupId } })
    // Every recipient the provider took, with the id its delivery reports will carry; none of it recorded.
    const { entries } = (givenUp!.outcome as { entries: { recipientIndex: number; messageId: string }[] })
    expect(entries.map((entry) => [entry.recipientIndex, entry.messageId])).toEqual(sent.map((message) => [Number(message.customFields.svcRecipient), message.messageId]))
    const unrecorded = await messageState(bed.iso.owner, smsId!)
    expect(unrecorded.recipients.every((recipient) => recipient.providerMessageId === null)).toBe(true)
    // The group was recorded before anything was added to it: whoever holds the message next reads it back.
    expect(await openGroupOf(bed.iso.owner, smsId!)).toBe(sent[0]!.groupId)

    const next = dispatcher()
    await until(async () => {
      await next.runOnce()
      return (await messageState(bed.iso.owner, smsId!)).status !== 'PENDING'
    })
    expect(acceptedCounts(sentFor(smsId!))).toEqual({ 0: 1, 1: 1 })
    expect(callsFor(smsId!)).toBe(1)
    const state = await messageState(bed.iso.owner, smsId!)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 2, claimToken: null })
    expect(state.recipients.map((recipient) => recipient.providerMessageId)).toEqual(sent.map((message) => message.messageId))
  }, TEST_TIMEOUT_MS)

  itPostgres('stop() finishes the attempt in flight and leaves every other due message unclaimed', async () => {
    const ids = await insertMessages(3)
    // Answered within the time limit, late enough for stop() to find it in flight.
    bed.fake.fail({ timeoutMs: 300, phase: 'send' }, 1)
    const engine = dispatcher({ concurrency: 1 })
    engine.kick()
    await until(() => bed.fake.holding() === 1)
    await engine.stop()
    const started = ids.filter((id) => callsFor(id) === 1)
    expect(started).toHaveLength(1)
    expect(await messageState(bed.iso.owner, started[0]!)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, claimToken: null })
    expect(acceptedCounts(sentFor(started[0]!))).toEqual({ 0: 1, 1: 1 })
    for (const id of ids.filter((id) => !started.includes(id))) {
      expect(callsFor(id)).toBe(0)
      expect(await messageState(bed.iso.owner, id)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
    }
    // Nothing left due for the file's other tests.
    await bed.iso.owner.updateTable('smsMessages').set({ status: 'CANCELLED' }).where('id', 'in', ids).where('status', '=', 'PENDING').execute()
  }, TEST_TIMEOUT_MS)

  itPostgres('after stop() gives back a claim it had not yet handed to the provider', async () => {
    const [smsId] = await insertMessages(1)
    const [claim] = (await claimDueMessages(bed.database.db, 100, 30)).filter((entry) => entry.smsId === smsId)
    expect(claim).toBeDefined()
    const engine = dispatcher()
    await engine.stop()
    await engine.processClaim(claim!)
    expect(callsFor(smsId!)).toBe(0)
    expect(await messageState(bed.iso.owner, smsId!)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
    await dispatcher().runOnce()
    expect(callsFor(smsId!)).toBe(1)
    expect(acceptedCounts(sentFor(smsId!))).toEqual({ 0: 1, 1: 1 })
  }, TEST_TIMEOUT_MS)
})
