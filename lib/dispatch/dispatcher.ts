import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { claimDueMessages, type Claim } from '../../db/repos/dispatch/dispatch.js'
import type { DB } from '../../db/schema.js'
import { systemClock, type Clock } from '../clock.js'
import { DEFAULT_TIME_ZONE, LEASE_MARGIN_MS } from '../env.js'
import type { DatabaseOutage } from '../observability/database-outage.js'
import { noMetrics, type MetricsRecorder } from '../observability/metrics.js'
import { DISPATCH_RECORD_GRACE_MS } from '../shutdown-budget.js'
import { applyDeliveryReports, DEFAULT_FALLBACK_PRICES, type FallbackPrices } from './delivery/apply-reports.js'
import type { ReportDeliveries, SmsProvider } from './providers/provider.js'
import { inQuietHours } from '../advertising/quiet-hours.js'
import { runAttempt, type AttemptContext } from './attempt.js'
import { createOutcomeWriter } from './attempt-outcome.js'
import { ClaimLoop } from './claim-loop.js'
import { unlessOutage } from './unless-outage.js'
import { WorkerPool } from './worker-pool.js'

/**
 * The SMS dispatcher, composed of its parts: the claim loop (lib/dispatch/claim-loop.ts) claims due messages for
 * the free workers of the pool (lib/dispatch/worker-pool.ts), each of which runs one attempt
 * (lib/dispatch/attempt.ts). The service kicks the loop (plugins/dispatch/dispatcher.ts); runOnce drives the same loop.
 */

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
  /** Provider calls and retries are counted here (plugins/platform/metrics.ts). */
  metrics?: MetricsRecorder
  /** Where failures because the database is out of reach go instead of a line each (plugins/platform/db.ts). */
  databaseOutage?: Pick<DatabaseOutage, 'absorbs' | 'reachable'>
  /**
   * SVC_SMS_SYSTEM_SENDER: a system message from this number is not held for the tenant's sender number
   * (db/repos/dispatch/dispatch-hold.ts). Default none.
   */
  systemSender?: string | null
  /** SVC_TIME_ZONE: no advertisement is handed to the provider in its quiet hours (default Asia/Seoul). */
  timeZone?: string
  /** SVC_SMS_PRICE_SMS and SVC_SMS_PRICE_LMS: what an AlimTalk recipient delivered by the fallback is re-priced at. */
  fallbackPrices?: FallbackPrices
  /** Judges the quiet hours and times retries (default the system clock; tests fix it at 20:59 or 08:00). */
  clock?: Clock
  /** SVC_AD_CONSENT_DAYS: an advertisement's recipient whose consent is older is left out at hand-over (default 730). */
  adConsentDays?: number
}

export interface Dispatcher {
  /** Claims due work for every free worker now; calls while it claims are folded into one more claim. */
  kick(): void
  /**
   * Drives the claim loop until nothing is due (at most batchSize messages unless the service kicks it too), waiting
   * for every attempt it started; resolves with how many messages were claimed meanwhile (tests, scripts).
   */
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
  // The dispatcher's own state: whether stop() was called, and whether its grace for recordings is spent.
  const stopping = new AbortController()
  const stopGraceOver = new AbortController()
  const reportDeliveries: ReportDeliveries = async (reports) => {
    await applyDeliveryReports(
      db,
      reports.map((report) => ({ ok: true as const, report })),
      options.fallbackPrices ?? DEFAULT_FALLBACK_PRICES,
    )
  }

  const attempts: AttemptContext = {
    db,
    provider,
    log,
    metrics: options.metrics ?? noMetrics,
    leaseSeconds,
    callBudgetMs,
    recordPatienceMs: (options.recordPatienceSeconds ?? DEFAULT_RECORD_PATIENCE_SECONDS) * 1000,
    handOver: {
      maxAttempts: options.maxAttempts,
      systemSender,
      advertisingOpen,
      timeZone,
      outcomes,
      consentDays: options.adConsentDays ?? 730,
      clock,
    },
    outcomes,
    reportDeliveries,
    unlessOutage: failures,
    stopping: stopping.signal,
    stopGraceOver: stopGraceOver.signal,
  }
  const pool = new WorkerPool({
    size: options.concurrency ?? DEFAULT_CONCURRENCY,
    attempt: (claim, claimedAt) => runAttempt(attempts, claim, claimedAt),
    log,
    unlessOutage: failures,
  })
  const loop = new ClaimLoop({
    pool,
    claimDue: async (count) => {
      const claims = await claimDueMessages(db, count, leaseSeconds, systemSender, advertisingOpen())
      options.databaseOutage?.reachable()
      return claims
    },
    batchSize: options.batchSize,
    stopping: stopping.signal,
    log,
    unlessOutage: failures,
  })

  return {
    kick: () => loop.kick(),
    runOnce: () => loop.pass(),
    async processClaim(claim: Claim) {
      // Its failure reaches the caller (tests drive claims directly).
      await pool.runWithoutWorker(claim)
    },
    async stop() {
      stopping.abort()
      const graceTimer = setTimeout(() => stopGraceOver.abort(), options.recordGraceOnStopMs ?? DISPATCH_RECORD_GRACE_MS)
      try {
        await loop.claimEnded()
        await pool.ended()
      } finally {
        clearTimeout(graceTimer)
      }
    },
  }
}
