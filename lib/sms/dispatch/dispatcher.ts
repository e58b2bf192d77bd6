import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import {
  claimDueMessages,
  findUnsentRecipients,
  findClaimedMessage,
  handOverClaimedMessage,
  optOutListedRecipients,
  recordOpenGroup,
  recordRecipientOutcomes,
  releaseClaim,
  renewLease,
  type Claim,
  type ClaimedMessage,
  type UnsentRecipient,
} from '../../../db/repos/dispatch.js'
import { releaseDailyRecipients } from '../../../db/repos/sms-quota.js'
import type { DB } from '../../../db/schema.js'
import { withTenant, type TenantTx } from '../../../db/tenant-transaction.js'
import { applyDeliveryReports } from '../delivery/apply-reports.js'
import type { GroupOwner, OutgoingSms, ReportDeliveries, SendRequest, SmsProvider } from '../providers/provider.js'
import { systemClock, type Clock } from '../../clock.js'
import { DEFAULT_TIME_ZONE, LEASE_MARGIN_MS } from '../../env.js'
import type { DatabaseOutage } from '../../observability/database-outage.js'
import { errorSummary } from '../../observability/error-summary.js'
import { noMetrics, type MetricsRecorder } from '../../observability/metrics.js'
import { DISPATCH_RECORD_GRACE_MS } from '../../shutdown-budget.js'
import { advertisementSubject, frameAdvertisement } from '../advertising.js'
import { inQuietHours } from '../quiet-hours.js'
import { renderContent, type RenderFields } from '../sizing.js'
import { createOutcomeWriter, recipientOutcome } from './attempt-outcome.js'
import { handOverInGroup, HandOverStopped, type HandOverOutcome, type PlacedEntry } from './group-hand-over.js'
import { startHeartbeat, type Heartbeat } from './lease-heartbeat.js'
import { writePatiently } from './patient-write.js'

export interface DispatcherOptions {
  db: Kysely<DB>
  provider: SmsProvider
  log: FastifyBaseLogger
  /** Messages claimed by one claim at most (never more than the free workers). */
  batchSize: number
  maxAttempts: number
  retryBaseSeconds: number
  /**
   * A claim's lease, renewed while its attempt runs: a dead instance's message is taken over after one lease
   * (SVC_SMS_LEASE_SECONDS). It must outlast one provider call (the provider's callTimeoutMs) and a margin.
   */
  leaseSeconds?: number
  /**
   * Messages handed to the provider at the same time; the dispatcher claims only as many as it has free workers,
   * and a worker that finishes claims again at once, whatever the others are waiting for.
   */
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
  /** Where failures because the database is out of reach go instead of a line each (plugins/db.ts). */
  databaseOutage?: Pick<DatabaseOutage, 'absorbs' | 'reachable'>
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
  /** Claims due work for every free worker now; calls while it claims are folded into one more claim. */
  kick(): void
  /** Claims and sends until nothing is due (at most batchSize messages), waiting for every attempt (tests). */
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
// Tests' default; the service passes SVC_SMS_DISPATCH_WORKERS.
const DEFAULT_CONCURRENCY = 4
const DEFAULT_RECORD_PATIENCE_SECONDS = 300

/** What an attempt hands over: the recipients still to send, and a group an earlier attempt left open. */
type Prepared = {
  request: SendRequest
  attempt: number
  openGroupId: string | null
  /** Resolve the open group and end the message: why (expired, out of attempts), or null to send. */
  sendNothingNew: string | null
}

type AttemptKind = 'accepted' | 'rejected' | 'retryable' | 'unresolved'

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

/** An LMS message's subject: its title, after the `(광고)` label for an advertisement. */
function messageSubject(message: ClaimedMessage): string {
  return message.purpose === 'ADVERTISEMENT' ? advertisementSubject(message.title) : message.title
}

function attemptKind(outcome: HandOverOutcome): AttemptKind {
  const { rest } = outcome
  if (rest.kind === 'none' || rest.kind === 'stopped') return 'accepted'
  return rest.kind
}

/** The groups an outcome names, for the log lines an operator reconciles with the provider's console. */
function groupsOf(outcome: HandOverOutcome): string[] {
  const groups = new Set(outcome.entries.map((entry) => entry.groupId))
  if (outcome.rest.kind === 'unresolved' || (outcome.rest.kind === 'stopped' && outcome.rest.groupId !== null)) {
    groups.add(outcome.rest.groupId!)
  }
  return [...groups]
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { db, provider, log } = options
  const metrics = options.metrics ?? noMetrics
  /**
   * A failure because the database is out of reach is counted in the outage (one warn when it starts, one info when it
   * ends) instead of a line with a stack each; any other failure is logged by `otherwise`.
   */
  const unlessOutage = (error: unknown, otherwise: () => void) => {
    if (!options.databaseOutage?.absorbs('dispatch', error)) otherwise()
  }
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const recordPatienceMs = (options.recordPatienceSeconds ?? DEFAULT_RECORD_PATIENCE_SECONDS) * 1000
  const recordGraceOnStopMs = options.recordGraceOnStopMs ?? DISPATCH_RECORD_GRACE_MS
  const systemSender = options.systemSender ?? null
  const timeZone = options.timeZone ?? DEFAULT_TIME_ZONE
  const clock = options.clock ?? systemClock
  const callBudgetMs = provider.callTimeoutMs + LEASE_MARGIN_MS
  if (leaseSeconds * 1000 <= callBudgetMs) {
    throw new RangeError(
      `the dispatch lease (${leaseSeconds} s) must outlast one provider call (${provider.callTimeoutMs} ms) and ${LEASE_MARGIN_MS} ms`,
    )
  }
  /** Read afresh at every claim and every hand-over: a claim made at 20:59:59 is not handed over at 21:00. */
  const advertisingOpen = () => !inQuietHours(clock(), timeZone)
  let stopping = false
  const stopGraceOver = new AbortController()
  const attempts = new Set<Promise<void>>()
  const outcomes = createOutcomeWriter({ ...options, clock, timeZone })
  const reportDeliveries: ReportDeliveries = async (reports) => {
    await applyDeliveryReports(db, reports.map((report) => ({ ok: true as const, report })))
  }

  /**
   * A number put on the opt-out list after an advertisement was accepted must not get it either: its recipients
   * are left out at every hand-over, and the quota gets them back on the day the message was accepted.
   */
  async function leaveOutLateOptOuts(trx: TenantTx, tenantId: number, message: ClaimedMessage): Promise<void> {
    const listed = await optOutListedRecipients(trx, message.id)
    await releaseDailyRecipients(trx, tenantId, { at: message.createdAt, timeZone }, listed)
  }

  /** The recipients still to send (PENDING), each with its message as `compose` makes it. */
  async function requestOf(
    trx: TenantTx,
    owner: GroupOwner,
    compose: (recipient: UnsentRecipient) => Omit<OutgoingSms, 'recipientIndex' | 'to'>,
  ): Promise<SendRequest> {
    const recipients = await findUnsentRecipients(trx, owner.smsId)
    return {
      ...owner,
      messages: recipients.map((recipient) => ({ recipientIndex: recipient.recipientIndex, to: recipient.phone, ...compose(recipient) })),
    }
  }

  /**
   * The hand-over: in one transaction, checks the claim, counts the attempt and marks the message as handed to
   * the provider. Once this commits the provider may be called; before, the claim can still be given back. A
   * message that can never be sent ends here, unless a group of an earlier attempt is open: that is read back first.
   */
  async function prepare(trx: TenantTx, claim: Claim): Promise<Prepared | null> {
    const message = await handOverClaimedMessage(trx, claim, options.maxAttempts, systemSender, advertisingOpen())
    if (!message) {
      const unsent = await findClaimedMessage(trx, claim)
      const reason = unsent ? outcomes.unsendableReason(unsent) : null
      if (unsent && reason !== null && unsent.openGroupId !== null) {
        // Only read back, never sent: the recipients' numbers are all it needs.
        const owner = { tenantSlug: unsent.tenantSlug, smsId: claim.smsId, kind: unsent.kind }
        const request = await requestOf(trx, owner, () => ({ from: '', text: '', type: 'SMS' }))
        return { attempt: unsent.dispatchAttempts, openGroupId: unsent.openGroupId, sendNothingNew: reason, request }
      }
      if (unsent && reason !== null) await outcomes.failUnsendable(trx, claim, unsent.dispatchAttempts, reason)
      // Held since the claim (tenant suspended, sender number rejected or replaced, an advertisement whose quiet
      // hours have begun): give it back untouched, PENDING.
      await releaseClaim(trx, claim)
      return null
    }
    if (message.purpose === 'ADVERTISEMENT') await leaveOutLateOptOuts(trx, claim.tenantId, message)
    const textFor = messageText(message)
    const owner = { tenantSlug: message.tenantSlug, smsId: message.id, kind: message.kind }
    const request = await requestOf(trx, owner, (recipient) => ({
      from: message.senderNumber ?? '',
      text: textFor(recipient),
      type: message.messageType,
      ...(message.messageType === 'LMS' ? { subject: messageSubject(message) } : {}),
    }))
    return { attempt: message.dispatchAttempts, openGroupId: message.openGroupId, sendNothingNew: null, request }
  }

  /**
   * The outcome exists only in this process now: a failed write (database restart, lost connection) is retried as a
   * write while the heartbeat keeps the lease, never as a new send. Given up (patience or, on shutdown, the grace
   * spent), it is logged whole with its groups; the group this attempt recorded stays open, so whoever holds the
   * message next reads it back and nothing is sent twice.
   */
  async function recordPatiently(claim: Claim, prepared: Prepared, outcome: HandOverOutcome, answeredAt: Date): Promise<boolean> {
    const context = { tenantId: claim.tenantId, smsId: claim.smsId, attempt: prepared.attempt, groups: groupsOf(outcome) }
    let recorded: boolean
    try {
      recorded = await writePatiently(
        () => withTenant(db, claim.tenantId, (trx) => outcomes.record(trx, claim, prepared.attempt, outcome, answeredAt)),
        recordPatienceMs,
        // Kept per retry (it names the groups an operator reconciles by), but without a stack: the cause is the outage.
        (error, delayMs) =>
          log.warn({ ...errorSummary(error), ...context, delayMs }, 'could not record the provider outcome; retrying the write, not the send'),
        stopGraceOver.signal,
      )
    } catch (error) {
      log.error({ err: error, ...context, answeredAt, outcome }, 'provider outcome given up unrecorded: the next holder reads its groups back')
      throw error
    }
    if (!recorded) log.warn({ ...context, outcome }, 'dispatch claim lost before the outcome was recorded: the next holder reads its groups back')
    return recorded
  }

  function keepLeaseAlive(claim: Claim, claimedAt: number): Heartbeat {
    return startHeartbeat({
      leaseSeconds,
      claimedAt,
      renew: () => withTenant(db, claim.tenantId, (trx) => renewLease(trx, claim, leaseSeconds)),
      onLost: () => log.warn({ smsId: claim.smsId }, 'dispatch claim taken over while its attempt ran'),
      onError: (error) => unlessOutage(error, () => log.warn({ err: error, smsId: claim.smsId }, 'could not renew the dispatch lease')),
    })
  }

  /** Records the group before any message is added to it, with the outcomes of a group read back before it. */
  async function recordGroup(claim: Claim, groupId: string, known: PlacedEntry[]): Promise<void> {
    const held = await withTenant(db, claim.tenantId, async (trx) => {
      if (!(await recordOpenGroup(trx, claim, groupId))) return false
      await recordRecipientOutcomes(trx, claim.smsId, known.map(recipientOutcome))
      return true
    })
    if (!held) throw new HandOverStopped('the claim was taken over')
  }

  /** Hands the message over and records the outcome; what was recorded, or null when nothing was (held, lost). */
  async function handOverAndRecord(claim: Claim, lease: Heartbeat): Promise<{ prepared: Prepared; outcome: HandOverOutcome } | null> {
    let prepared: Prepared | null
    try {
      prepared = await withTenant(db, claim.tenantId, (trx) => prepare(trx, claim))
    } catch (error) {
      // Whether the hand-over committed is unknown; the release only succeeds if it did not.
      await release(claim)
      throw error
    }
    if (!prepared) return null
    const startedAt = performance.now()
    // The provider is called outside any transaction: no connection or lock is held while it answers.
    const outcome = await handOverInGroup({
      provider,
      request: prepared.request,
      openGroupId: prepared.openGroupId,
      sendNothingNew: prepared.sendNothingNew,
      beforeCall: () =>
        lease.ensure(callBudgetMs).catch((error: unknown) => {
          throw new HandOverStopped(error instanceof Error ? error.message : String(error))
        }),
      recordGroup: (groupId, known) => recordGroup(claim, groupId, known),
    })
    const context = { tenantId: claim.tenantId, smsId: claim.smsId, attempt: prepared.attempt }
    if (outcome.rest.kind === 'stopped') {
      // Nothing can be written that the database would take from this claim; the next holder reads the group back.
      log.warn({ ...context, groups: groupsOf(outcome), reason: outcome.rest.error }, 'dispatch attempt stopped before its next provider call')
      return null
    }
    if (outcome.rest.kind === 'unresolved') {
      log.warn({ ...context, groupId: outcome.rest.groupId, error: outcome.rest.error }, 'provider outcome unknown: the group is read back at the next attempt')
    }
    if (prepared.request.messages.length > 0) metrics.providerCall(attemptKind(outcome), (performance.now() - startedAt) / 1000)
    return (await recordPatiently(claim, prepared, outcome, new Date())) ? { prepared, outcome } : null
  }

  /** The attempt's outcome, or null when nothing was recorded (held, released, claim lost, stopped). */
  async function attempt(claim: Claim, claimedAt: number): Promise<AttemptKind | null> {
    if (stopping) {
      await release(claim)
      return null
    }
    // From the claim until the outcome is recorded (or given up), however long the provider or the database takes.
    const lease = keepLeaseAlive(claim, claimedAt)
    let recorded: Awaited<ReturnType<typeof handOverAndRecord>>
    try {
      recorded = await handOverAndRecord(claim, lease)
    } finally {
      lease.stop()
    }
    if (!recorded) return null
    const { prepared, outcome } = recorded
    if (outcome.sentGroupId !== null) {
      const groupId = outcome.sentGroupId
      const taken = outcome.entries.filter((entry) => entry.groupId === groupId && entry.messageId !== null)
      const { tenantSlug, smsId, kind } = prepared.request
      await provider.afterRecorded?.({ owner: { tenantSlug, smsId, kind }, groupId, taken }, reportDeliveries)
    }
    return attemptKind(outcome)
  }

  async function release(claim: Claim): Promise<void> {
    await withTenant(db, claim.tenantId, (trx) => releaseClaim(trx, claim)).catch((error: unknown) =>
      unlessOutage(error, () => log.error({ err: error, smsId: claim.smsId }, 'could not release dispatch claim')),
    )
  }

  /** An attempt, tracked so that stop() waits for it whether it succeeds or fails. */
  function started(claim: Claim, claimedAt: number): Promise<AttemptKind | null> {
    const running = attempt(claim, claimedAt)
    const settled = running.then(
      () => undefined,
      () => undefined,
    )
    attempts.add(settled)
    void settled.finally(() => attempts.delete(settled))
    return running
  }

  /** Runs one claim's attempt, tracked for stop(); never rejects (a failure is logged, its lease lapses). */
  function track(claim: Claim, claimedAt: number): Promise<AttemptKind | 'failed' | null> {
    return started(claim, claimedAt).catch((error: unknown) => {
      unlessOutage(error, () =>
        log.error({ err: error, smsId: claim.smsId }, 'dispatch of a message failed; its lease lapses and the next holder takes it over'),
      )
      return 'failed' as const
    })
  }

  /** Claims for the free workers: as many as are free (never more than a batch), each started the moment it is claimed. */
  async function claimFor(free: number): Promise<{ claims: Claim[]; claimedAt: number }> {
    const claimedAt = performance.now()
    const claims = await claimDueMessages(db, Math.min(free, options.batchSize), leaseSeconds, systemSender, advertisingOpen())
    options.databaseOutage?.reachable()
    return { claims, claimedAt }
  }

  /** The one line an operator reads per claim: what was claimed and how the attempts ended. */
  function logRound(running: Promise<AttemptKind | 'failed' | null>[]): void {
    void Promise.all(running).then((kinds) => {
      const count = (kind: AttemptKind | 'failed' | null) => kinds.filter((each) => each === kind).length
      log.info(
        {
          claimed: kinds.length,
          sent: count('accepted'),
          retrying: count('retryable'),
          unresolved: count('unresolved'),
          failed: count('rejected') + count('failed'),
          notSent: count(null),
        },
        'dispatch batch',
      )
    })
  }

  let inFlight = 0
  let claiming: Promise<void> | null = null
  /** A kick arrived, or the last claim was full: there may be due work that no claim has looked for yet. */
  let backlog = false

  /**
   * Claims while workers are free and due work is found. Each attempt frees its worker when it ends and claims again
   * if there may be more, so a slow provider call holds one worker, never the others' next claims.
   */
  async function claimForFreeWorkers(): Promise<void> {
    while (!stopping && backlog && inFlight < concurrency) {
      backlog = false
      const wanted = Math.min(concurrency - inFlight, options.batchSize)
      const { claims, claimedAt } = await claimFor(wanted)
      if (claims.length === wanted) backlog = true
      if (claims.length === 0) return
      const round = claims.map((claim) => {
        inFlight++
        return track(claim, claimedAt).finally(() => {
          inFlight--
          if (backlog) kick()
        })
      })
      logRound(round)
    }
  }

  function kick(): void {
    if (stopping) return
    backlog = true
    if (claiming) return
    claiming = claimForFreeWorkers()
      .catch((error: unknown) => unlessOutage(error, () => log.error({ err: error }, 'dispatch claim failed')))
      .finally(() => {
        claiming = null
        // A worker freed (or a kick) while this claim ran still gets its claim.
        if (backlog && !stopping && inFlight < concurrency) kick()
      })
  }

  /** Claims and sends until nothing more is due or a batch was claimed, waiting for every attempt. */
  async function runOnce(): Promise<number> {
    let claimed = 0
    const running = new Set<Promise<unknown>>()
    try {
      while (!stopping && claimed < options.batchSize) {
        if (running.size >= concurrency) {
          await Promise.race(running)
          continue
        }
        const wanted = Math.min(concurrency - running.size, options.batchSize - claimed)
        const { claims, claimedAt } = await claimFor(wanted)
        claimed += claims.length
        const round = claims.map((claim) => {
          const task: Promise<AttemptKind | 'failed' | null> = track(claim, claimedAt).finally(() => running.delete(task))
          running.add(task)
          return task
        })
        if (round.length > 0) logRound(round)
        if (claims.length < wanted) break
      }
    } finally {
      await Promise.all(running)
    }
    return claimed
  }

  return {
    kick,
    runOnce,
    async processClaim(claim) {
      // Its failure reaches the caller (tests drive claims directly).
      await started(claim, performance.now())
    },
    async stop() {
      stopping = true
      const graceTimer = setTimeout(() => stopGraceOver.abort(), recordGraceOnStopMs)
      try {
        await claiming
        await Promise.allSettled([...attempts])
      } finally {
        clearTimeout(graceTimer)
      }
    },
  }
}
