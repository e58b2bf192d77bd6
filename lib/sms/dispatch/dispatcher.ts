import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import {
  claimDueMessages,
  findUnsentRecipients,
  handOverClaimedMessage,
  optOutListedRecipients,
  releaseClaim,
  renewLease,
  type Claim,
  type ClaimedMessage,
} from '../../../db/repos/dispatch.js'
import { releaseDailyRecipients } from '../../../db/repos/sms-quota.js'
import type { DB } from '../../../db/schema.js'
import { withTenant, type TenantTx } from '../../../db/tenant-transaction.js'
import { applyDeliveryReports } from '../delivery/apply-reports.js'
import type { SendRequest, SendResult, SmsProvider } from '../providers/provider.js'
import { systemClock, type Clock } from '../../clock.js'
import { DEFAULT_TIME_ZONE } from '../../env.js'
import { noMetrics, type MetricsRecorder } from '../../observability/metrics.js'
import { DISPATCH_RECORD_GRACE_MS } from '../../shutdown-budget.js'
import { frameAdvertisement } from '../advertising.js'
import { inQuietHours } from '../quiet-hours.js'
import { renderContent, type RenderFields } from '../sizing.js'
import { createOutcomeWriter } from './attempt-outcome.js'
import { startHeartbeat } from './lease-heartbeat.js'
import { writePatiently } from './patient-write.js'

export interface DispatcherOptions {
  db: Kysely<DB>
  provider: SmsProvider
  log: FastifyBaseLogger
  /** Messages claimed per pass at most; a full pass is followed by another. */
  batchSize: number
  maxAttempts: number
  retryBaseSeconds: number
  /**
   * A claim's lease, renewed while its attempt runs: a dead instance's message is taken over after one lease
   * (SVC_SMS_LEASE_SECONDS).
   */
  leaseSeconds?: number
  /** Messages sent to the provider at the same time; the dispatcher claims only as many as it has free workers. */
  concurrency?: number
  /** How long a provider answer whose recording fails is kept and its recording retried. */
  recordPatienceSeconds?: number
  /**
   * Once stop() is called, how much longer such a recording is retried before the answer is given up (logged for
   * reconciliation). Default DISPATCH_RECORD_GRACE_MS, within the process's close timeout.
   */
  recordGraceOnStopMs?: number
  /** Provider calls and retries are counted here (plugins/metrics.ts). */
  metrics?: MetricsRecorder
  /**
   * SVC_SMS_SYSTEM_SENDER: a system message from this number is not held for the tenant's sender number
   * (db/repos/dispatch-hold.ts). Default none.
   */
  systemSender?: string | null
  /** SVC_TIME_ZONE: no advertisement is handed to the provider in its quiet hours (default Asia/Seoul). */
  timeZone?: string
  /** Judges the quiet hours and times retries (default the system clock; tests fix it at 20:59 or 08:00). */
  clock?: Clock
}

export interface Dispatcher {
  /** Looks for due work now; calls while a pass runs are folded into one more pass. */
  kick(): void
  /** One claim-and-send pass; resolves with the number of messages claimed. */
  runOnce(): Promise<number>
  /** Sends one claimed message; exposed so tests can drive a claim directly. */
  processClaim(claim: Claim): Promise<void>
  /**
   * Stops claiming, lets in-flight sends finish and record, gives back claims not yet handed to the provider. A
   * recording that still fails `recordGraceOnStopMs` after the call is given up.
   */
  stop(): Promise<void>
}

const DEFAULT_LEASE_SECONDS = 30
const DEFAULT_CONCURRENCY = 4
const DEFAULT_RECORD_PATIENCE_SECONDS = 300

type Prepared = { request: SendRequest; attempt: number }

/**
 * Each recipient's text. Stored content is never rendered; each recipient gets its own personalised text only here,
 * and an advertisement is framed with what it was accepted with (lib/sms/advertising.ts). A system message's text is
 * the service's own, sent as written: a tenant name may contain `{name}`.
 */
function messageText(message: ClaimedMessage): (recipient: RenderFields) => string {
  if (message.kind !== 'STAFF') return () => message.content
  if (message.purpose !== 'ADVERTISEMENT') return (recipient) => renderContent(message.content, recipient)
  const frame = { senderName: message.adSenderName!, optOutNumber: message.adOptOutNumber! }
  return (recipient) => frameAdvertisement(renderContent(message.content, recipient), frame)
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { db, provider, log } = options
  const metrics = options.metrics ?? noMetrics
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const recordPatienceMs = (options.recordPatienceSeconds ?? DEFAULT_RECORD_PATIENCE_SECONDS) * 1000
  const recordGraceOnStopMs = options.recordGraceOnStopMs ?? DISPATCH_RECORD_GRACE_MS
  const systemSender = options.systemSender ?? null
  const timeZone = options.timeZone ?? DEFAULT_TIME_ZONE
  const clock = options.clock ?? systemClock
  /** Read afresh at every claim and every hand-over: a claim made at 20:59:59 is not handed over at 21:00. */
  const advertisingOpen = () => !inQuietHours(clock(), timeZone)
  let stopping = false
  const stopGraceOver = new AbortController()
  let pass: Promise<void> | null = null
  let again = false
  const attempts = new Set<Promise<void>>()
  const outcomes = createOutcomeWriter({ ...options, clock, timeZone })

  /**
   * A number put on the opt-out list after an advertisement was accepted must not get it either: its recipients
   * are left out at every hand-over, and the quota gets them back on the day the message was accepted.
   */
  async function leaveOutLateOptOuts(trx: TenantTx, tenantId: number, message: ClaimedMessage): Promise<void> {
    const listed = await optOutListedRecipients(trx, message.id)
    await releaseDailyRecipients(trx, tenantId, { at: message.createdAt, timeZone }, listed)
  }

  /**
   * The hand-over: in one transaction, checks the claim, counts the attempt and marks the message as handed to
   * the provider. Once this commits the provider is called; before, the claim can still be given back.
   */
  async function prepare(trx: TenantTx, claim: Claim): Promise<Prepared | null> {
    const message = await handOverClaimedMessage(trx, claim, options.maxAttempts, systemSender, advertisingOpen())
    if (!message) {
      await outcomes.failUnsendable(trx, claim)
      // Held since the claim (tenant suspended, sender number rejected or replaced, an advertisement whose quiet
      // hours have begun): give it back untouched, PENDING.
      await releaseClaim(trx, claim)
      return null
    }
    if (message.purpose === 'ADVERTISEMENT') await leaveOutLateOptOuts(trx, claim.tenantId, message)
    const recipients = await findUnsentRecipients(trx, message.id)
    const textFor = messageText(message)
    return {
      attempt: message.dispatchAttempts,
      request: {
        tenantSlug: message.tenantSlug,
        smsId: message.id,
        kind: message.kind,
        messages: recipients.map((recipient) => ({
          recipientIndex: recipient.recipientIndex,
          to: recipient.phone,
          from: message.senderNumber ?? '',
          text: textFor(recipient),
          type: message.messageType,
          ...(message.messageType === 'LMS' ? { subject: message.title } : {}),
        })),
      },
    }
  }

  /**
   * The answer exists only in this process now: a failed write (database restart, lost connection) is retried as
   * a write while the heartbeat keeps the lease, never as a new send. After the patience (or, on shutdown, the
   * grace) runs out the lease lapses and another pass sends again (the provider may then get it twice, as after a
   * timeout): the answer goes to the error log whole, so an operator can tell the two sends apart.
   */
  async function recordPatiently(claim: Claim, prepared: Prepared, result: SendResult, answeredAt: Date): Promise<boolean> {
    try {
      return await writePatiently(
        () => withTenant(db, claim.tenantId, (trx) => outcomes.record(trx, claim, prepared.attempt, result, answeredAt)),
        recordPatienceMs,
        (error, delayMs) =>
          log.warn({ err: error, smsId: claim.smsId, delayMs }, 'could not record the provider answer; retrying the write, not the send'),
        stopGraceOver.signal,
      )
    } catch (error) {
      log.error(
        { err: error, tenantId: claim.tenantId, smsId: claim.smsId, attempt: prepared.attempt, answeredAt, answer: result },
        'provider answer given up unrecorded: the provider has this attempt, this service does not, and will send again',
      )
      throw error
    }
  }

  function keepLeaseAlive(claim: Claim) {
    return startHeartbeat({
      leaseSeconds,
      renew: () => withTenant(db, claim.tenantId, (trx) => renewLease(trx, claim, leaseSeconds)),
      onLost: () => log.warn({ smsId: claim.smsId }, 'dispatch claim taken over while its attempt ran'),
      onError: (error) => log.warn({ err: error, smsId: claim.smsId }, 'could not renew the dispatch lease'),
    })
  }

  /** Hands the message over, calls the provider and records its answer; returns what must follow the record. */
  async function sendAndRecord(claim: Claim): Promise<{ prepared: Prepared; result: SendResult } | null> {
    let prepared: Prepared | null
    try {
      prepared = await withTenant(db, claim.tenantId, (trx) => prepare(trx, claim))
    } catch (error) {
      // Whether the hand-over committed is unknown; the release only succeeds if it did not.
      await release(claim)
      throw error
    }
    if (!prepared) return null
    // The provider is called outside any transaction: no connection or lock is held while it answers.
    let result: SendResult
    const calledAt = performance.now()
    try {
      result =
        prepared.request.messages.length > 0
          ? await provider.send(prepared.request)
          : { kind: 'accepted', groupId: null, accepted: [], refused: [] }
    } catch (error) {
      result = { kind: 'retryable', error: `provider adapter failed: ${String(error)}` }
    }
    if (prepared.request.messages.length > 0) metrics.providerCall(result.kind, (performance.now() - calledAt) / 1000)
    return (await recordPatiently(claim, prepared, result, new Date())) ? { prepared, result } : null
  }

  /** The provider's answer to the attempt, or null when nothing was sent (held, released, claim lost). */
  async function attempt(claim: Claim): Promise<SendResult['kind'] | null> {
    if (stopping) {
      await release(claim)
      return null
    }
    // From the claim until the answer is recorded (or given up), however long the provider or the database takes.
    const heartbeat = keepLeaseAlive(claim)
    let recorded: Awaited<ReturnType<typeof sendAndRecord>>
    try {
      recorded = await sendAndRecord(claim)
    } finally {
      heartbeat.stop()
    }
    if (recorded && recorded.result.kind === 'accepted' && provider.reportsFor) {
      const reports = provider.reportsFor(recorded.prepared.request, recorded.result)
      await applyDeliveryReports(db, reports.map((report) => ({ ok: true as const, report })))
    }
    return recorded ? recorded.result.kind : null
  }

  async function runClaim(claim: Claim): Promise<SendResult['kind'] | null> {
    const running = attempt(claim)
    const tracked = running.then(() => undefined, () => undefined)
    attempts.add(tracked)
    try {
      return await running
    } finally {
      attempts.delete(tracked)
    }
  }

  async function processClaim(claim: Claim): Promise<void> {
    await runClaim(claim)
  }

  async function release(claim: Claim): Promise<void> {
    await withTenant(db, claim.tenantId, (trx) => releaseClaim(trx, claim)).catch((error: unknown) =>
      log.error({ err: error, smsId: claim.smsId }, 'could not release dispatch claim'),
    )
  }

  /**
   * Claims only as many messages as there are free workers, each the moment a worker can start it, so nothing
   * claimed waits in this process: a dead instance strands only what it had handed to the provider.
   */
  async function runOnce(): Promise<number> {
    let claimed = 0
    // For the one line an operator reads per batch: what was claimed and how the provider answered.
    const tally = { sent: 0, retrying: 0, failed: 0, notSent: 0 }
    const running = new Set<Promise<void>>()
    try {
      while (!stopping && claimed < options.batchSize) {
        if (running.size >= concurrency) {
          await Promise.race(running)
          continue
        }
        const wanted = Math.min(concurrency - running.size, options.batchSize - claimed)
        const claims = await claimDueMessages(db, wanted, leaseSeconds, systemSender, advertisingOpen())
        claimed += claims.length
        for (const claim of claims) {
          const task: Promise<void> = runClaim(claim)
            .then((kind) => {
              if (kind === 'accepted') tally.sent++
              else if (kind === 'retryable') tally.retrying++
              else if (kind === 'rejected') tally.failed++
              else tally.notSent++
            })
            .catch((error: unknown) => {
              tally.failed++
              // The claim's lease runs out and another pass retries it.
              log.error({ err: error, smsId: claim.smsId }, 'dispatch of a message failed')
            })
            .finally(() => running.delete(task))
          running.add(task)
        }
        if (claims.length < wanted) break
      }
    } finally {
      await Promise.all(running)
      // Empty passes (every scheduler tick) stay out of the info log.
      if (claimed > 0) log.info({ claimed, ...tally }, 'dispatch batch')
    }
    return claimed
  }

  function kick(): void {
    if (stopping) return
    if (pass) {
      again = true
      return
    }
    pass = (async () => {
      do {
        again = false
        try {
          const claimed = await runOnce()
          if (claimed === options.batchSize) again = true
        } catch (error) {
          log.error({ err: error }, 'dispatch pass failed')
        }
      } while (again && !stopping)
    })().finally(() => {
      pass = null
      // A kick that arrived after the last loop check still gets its pass.
      if (again && !stopping) kick()
    })
  }

  return {
    kick,
    runOnce,
    processClaim,
    async stop() {
      stopping = true
      const graceTimer = setTimeout(() => stopGraceOver.abort(), recordGraceOnStopMs)
      try {
        await pass
        await Promise.allSettled([...attempts])
      } finally {
        clearTimeout(graceTimer)
      }
    },
  }
}
