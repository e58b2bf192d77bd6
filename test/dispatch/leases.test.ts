import pg from 'pg'
import pino from 'pino'
import { describe, expect } from 'vitest'
import { claimDueMessages } from '../../db/repos/dispatch.js'
import type { DispatcherOptions } from '../../lib/sms/dispatch/dispatcher.js'
import type { SmsProvider } from '../../lib/sms/providers/provider.js'
import { until as untilWithin } from '../auth-fixtures.js'
import { withDatabase } from '../database-url.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../dispatch-fixtures.js'
import { startDispatchInstance, type InstanceConfig } from '../dispatch-instance.js'
import { fakeExtSmsCredentials, useDispatchTestBed } from '../dispatch-test-bed.js'
import { itPostgres } from '../helper.js'

// Leases and held provider answers take seconds: a longer deadline than the fixtures' default.
const until = (check: () => boolean | Promise<boolean>) => untilWithin(check, 15_000)

// Killed processes, a database that refuses connections: all of it needs a real PostgreSQL server.
describe('dispatch leases under faults', () => {
  const bed = useDispatchTestBed(6)
  const { extsms } = bed

  const dispatcher = (overrides: Partial<DispatcherOptions> = {}) =>
    bed.dispatcher({ provider: extsms(10_000), leaseSeconds: 2, ...overrides })

  function instance(overrides: Partial<InstanceConfig>) {
    return startDispatchInstance({
      databaseUrl: bed.iso.url,
      providerUrl: bed.fake.url,
      credentials: fakeExtSmsCredentials,
      leaseSeconds: 3,
      concurrency: 2,
      maxAttempts: 3,
      ...overrides,
    })
  }

  /** Provider calls that carried this message, answered or not. */
  const callsFor = (smsId: number) =>
    bed.fake.received.filter((request) => request.body.messages[0]?.customFields.svcSmsId === String(smsId)).length

  const insertMessages = async (count: number) => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const ids: number[] = []
    for (let i = 0; i < count; i++) ids.push(await insertPendingMessage(bed.iso.owner, tenant))
    return ids
  }

  /**
   * A provider that answers, and a database that goes down right after its first answer, before that answer is
   * recorded: every connection is dropped and new ones are refused (as during a restart) until `restore()`. The
   * engine's warnings and errors land in `logs`.
   */
  async function outageAfterFirstAnswer() {
    const databaseName = new URL(bed.iso.ownerUrl).pathname.slice(1)
    const admin = new pg.Client({ connectionString: withDatabase(bed.iso.ownerUrl, 'postgres') })
    await admin.connect()
    const logs: { level: number; msg: string; [field: string]: unknown }[] = []
    const log = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line)) })
    const live = extsms(10_000)
    let down = false
    const provider: SmsProvider = {
      name: 'extsms',
      async send(request) {
        const result = await live.send(request)
        if (!down) {
          down = true
          await admin.query(`alter database ${databaseName} allow_connections false`)
          await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [databaseName])
        }
        return result
      },
    }
    const restore = () => admin.query(`alter database ${databaseName} allow_connections true`)
    return {
      provider,
      log,
      logs,
      restore,
      async end() {
        await restore()
        await admin.end()
      },
    }
  }

  itPostgres('a killed instance strands only what it had handed to the provider, and that only for one lease', async () => {
    const ids = await insertMessages(5)
    bed.fake.fail({ timeoutMs: 60_000 })
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

    // One pass of another instance, right after the death, sends everything the dead one never handed over.
    await dispatcher().runOnce()
    for (const id of untouched) {
      expect(await messageState(bed.iso.owner, id)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1 })
    }

    const survivor = dispatcher()
    await until(async () => {
      await survivor.runOnce()
      const states = await Promise.all(handed.map((id) => messageState(bed.iso.owner, id)))
      return states.every((state) => state.status === 'DISPATCHED')
    })
    for (const id of handed) {
      expect(callsFor(id)).toBe(2)
      // The dead instance's attempt counted: the provider had been called.
      expect((await messageState(bed.iso.owner, id)).dispatchAttempts).toBe(2)
    }
  })

  itPostgres('keeps its lease alive while an attempt outlasts it, so no other instance sends the message again', async () => {
    const [smsId] = await insertMessages(1)
    bed.fake.fail({ timeoutMs: 5000 }, 1)
    const first = dispatcher({ leaseSeconds: 2 })
    const second = dispatcher({ leaseSeconds: 2 })
    let finished = false
    const running = first.runOnce().finally(() => {
      finished = true
    })
    await until(() => bed.fake.holding() === 1)
    // The other instance keeps looking for due work for as long as the slow attempt lasts (several leases).
    while (!finished) {
      await second.runOnce()
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await running
    expect(callsFor(smsId!)).toBe(1)
    expect(await messageState(bed.iso.owner, smsId!)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, claimToken: null })
  })

  itPostgres('counts an attempt when the provider is called, so a message that keeps killing its instance ends FAILED', async () => {
    const [smsId] = await insertMessages(1)
    bed.fake.fail({ timeoutMs: 60_000 })
    for (let attempt = 1; attempt <= 2; attempt++) {
      const doomed = instance({ concurrency: 1, leaseSeconds: 2, maxAttempts: 2 })
      try {
        await until(() => callsFor(smsId!) === attempt)
      } finally {
        await doomed.kill()
      }
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
    expect(callsFor(smsId!)).toBe(2)
  })

  itPostgres('records an answer whose first recording failed (database restart) without calling the provider again', async () => {
    const [smsId] = await insertMessages(1)
    const outage = await outageAfterFirstAnswer()
    const { logs } = outage
    // The runtime pool as the service opens it: a checked-out connection whose server goes away must not end the
    // process (db/driver/pg-client.ts listens for that).
    const runtime = bed.iso.open(4)
    const engine = dispatcher({ db: runtime.db, provider: outage.provider, log: outage.log, leaseSeconds: 1 })
    try {
      const pass = engine.runOnce().catch(() => 0)
      await until(() => logs.some((entry) => entry.level >= 40 && /record|dispatch of a message failed/.test(entry.msg)))
      await outage.restore()
      await pass
      // The scheduler's next passes, as they would come.
      await until(async () => {
        await engine.runOnce()
        return (await messageState(bed.iso.owner, smsId!)).status !== 'PENDING'
      })
    } finally {
      await outage.end()
      await runtime.close()
    }
    expect(callsFor(smsId!)).toBe(1)
    const state = await messageState(bed.iso.owner, smsId!)
    expect(state).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, claimToken: null })
    expect(state.recipients.every((recipient) => recipient.deliveryStatus === 'DISPATCHED' && recipient.providerMessageId)).toBe(true)
  })

  itPostgres('on stop, gives up recording an answer the database will not take after its grace, and logs the answer whole', async () => {
    const [smsId] = await insertMessages(1)
    // The database stays down past the shutdown.
    const outage = await outageAfterFirstAnswer()
    const { logs } = outage
    const runtime = bed.iso.open(4)
    // Patience far beyond the test's own time limit: only the grace can end the wait.
    const engine = dispatcher({ db: runtime.db, provider: outage.provider, log: outage.log, recordPatienceSeconds: 3600, recordGraceOnStopMs: 500 })
    try {
      const pass = engine.runOnce().catch(() => 0)
      await until(() => logs.some((entry) => entry.level === 40 && /could not record the provider answer/.test(entry.msg)))
      // Without the grace, stop() waits out the patience and the process's close timeout kills it mid-retry, with
      // nothing in the log but the warnings.
      await engine.stop()
      await pass
    } finally {
      await outage.end()
      await runtime.close()
    }
    const givenUp = logs.find((entry) => entry.level === 50 && /given up unrecorded/.test(entry.msg))
    expect(givenUp).toMatchObject({ smsId, attempt: 1, answer: { kind: 'accepted', refused: [] } })
    const { accepted } = (givenUp!.answer as { accepted: { recipientIndex: number; messageId: string }[] })
    const state = await messageState(bed.iso.owner, smsId!)
    // Every recipient the provider took, with the id its delivery reports will carry; none of it recorded.
    expect(accepted.map((entry) => entry.recipientIndex).sort()).toEqual(state.recipients.map((recipient) => recipient.recipientIndex).sort())
    expect(accepted.every((entry) => /\S/.test(entry.messageId))).toBe(true)
    expect(state.recipients.every((recipient) => recipient.providerMessageId === null)).toBe(true)
    expect(callsFor(smsId!)).toBe(1)
  })

  itPostgres('stop() finishes the attempt in flight and leaves every other due message unclaimed', async () => {
    const ids = await insertMessages(3)
    bed.fake.fail({ timeoutMs: 1000 }, 1)
    const engine = dispatcher({ concurrency: 1 })
    engine.kick()
    await until(() => bed.fake.holding() === 1)
    await engine.stop()
    const started = ids.filter((id) => callsFor(id) === 1)
    expect(started).toHaveLength(1)
    expect(await messageState(bed.iso.owner, started[0]!)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 1, claimToken: null })
    for (const id of ids.filter((id) => !started.includes(id))) {
      expect(callsFor(id)).toBe(0)
      expect(await messageState(bed.iso.owner, id)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
    }
    // Nothing left due for the file's other tests.
    await bed.iso.owner.updateTable('smsMessages').set({ status: 'CANCELLED' }).where('id', 'in', ids).where('status', '=', 'PENDING').execute()
  })

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
  })
})
