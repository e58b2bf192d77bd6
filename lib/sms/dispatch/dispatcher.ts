import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { claimDueMessages, type Claim } from '../../../db/repos/dispatch.js'
import type { DB } from '../../../db/schema.js'
import { systemClock, type Clock } from '../../clock.js'
import { DEFAULT_TIME_ZONE, LEASE_MARGIN_MS } from '../../env.js'
import type { DatabaseOutage } from '../../observability/database-outage.js'
import { noMetrics, type MetricsRecorder } from '../../observability/metrics.js'
import { DISPATCH_RECORD_GRACE_MS } from '../../shutdown-budget.js'
import { applyDeliveryReports } from '../delivery/apply-reports.js'
import type { ReportDeliveries, SmsProvider } from '../providers/provider.js'
import { inQuietHours } from '../quiet-hours.js'
import { runAttempt, type AttemptContext, type AttemptKind } from './attempt.js'
import { createOutcomeWriter } from './attempt-outcome.js'
import { unlessOutage } from './unless-outage.js'

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

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { db, provider, log } = options
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS
  const callBudgetMs = provider.callTimeoutMs + LEASE_MARGIN_MS
  if (leaseSeconds * 1000 <= callBudgetMs) {
    throw new RangeError(
      `the dispatch lease (${leaseSeconds} s) must outlast one provider call (${provider.callTimeoutMs} ms) and ${LEASE_MARGIN_MS} ms`,
    )
  }
  const systemSender = options.systemSender ?? null
  const timeZone = options.timeZone ?? DEFAULT_TIME_ZONE
  const clock = options.clock ?? systemClock
  /** Read afresh at every claim and every hand-over: a claim made at 20:59:59 is not handed over at 21:00. */
  const advertisingOpen = () => !inQuietHours(clock(), timeZone)
  const outcomes = createOutcomeWriter({ ...options, clock, timeZone })
  const failures = unlessOutage(options.databaseOutage)
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const attempts = new Set<Promise<void>>()
  // The dispatcher's own state: whether stop() was called, and whether its grace for recordings is spent.
  const stopping = new AbortController()
  const stopGraceOver = new AbortController()
  const reportDeliveries: ReportDeliveries = async (reports) => {
    await applyDeliveryReports(db, reports.map((report) => ({ ok: true as const, report })))
  }

  const context: AttemptContext = {
    db,
    provider,
    log,
    metrics: options.metrics ?? noMetrics,
    leaseSeconds,
    callBudgetMs,
    recordPatienceMs: (options.recordPatienceSeconds ?? DEFAULT_RECORD_PATIENCE_SECONDS) * 1000,
    handOver: { maxAttempts: options.maxAttempts, systemSender, advertisingOpen, timeZone, outcomes },
    outcomes,
    reportDeliveries,
    unlessOutage: failures,
    stopping: stopping.signal,
    stopGraceOver: stopGraceOver.signal,
  }
  /** An attempt, tracked so that stop() waits for it whether it succeeds or fails. */
  function started(claim: Claim, claimedAt: number): Promise<AttemptKind | null> {
    const running = runAttempt(context, claim, claimedAt)
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
      failures(error, () =>
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
    while (!stopping.signal.aborted && backlog && inFlight < concurrency) {
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
    if (stopping.signal.aborted) return
    backlog = true
    if (claiming) return
    claiming = claimForFreeWorkers()
      .catch((error: unknown) => failures(error, () => log.error({ err: error }, 'dispatch claim failed')))
      .finally(() => {
        claiming = null
        // A worker freed (or a kick) while this claim ran still gets its claim.
        if (backlog && !stopping.signal.aborted && inFlight < concurrency) kick()
      })
  }

  /** Claims and sends until nothing more is due or a batch was claimed, waiting for every attempt. */
  async function runOnce(): Promise<number> {
    let claimed = 0
    const running = new Set<Promise<unknown>>()
    try {
      while (!stopping.signal.aborted && claimed < options.batchSize) {
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
      stopping.abort()
      const graceTimer = setTimeout(() => stopGraceOver.abort(), options.recordGraceOnStopMs ?? DISPATCH_RECORD_GRACE_MS)
      try {
        await claiming
        await Promise.allSettled([...attempts])
      } finally {
        clearTimeout(graceTimer)
      }
    },
  }
}
