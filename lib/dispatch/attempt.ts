import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { recordOpenGroup, recordRecipientOutcomes, releaseClaim, renewLease, type Claim } from '../../db/repos/dispatch/dispatch.js'
import type { DB } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { errorSummary } from '../observability/error-summary.js'
import type { MetricsRecorder } from '../observability/metrics.js'
import type { ReportDeliveries, SmsProvider } from './providers/provider.js'
import { recipientOutcome, type OutcomeWriter } from './attempt-outcome.js'
import { handOverInGroup, HandOverStopped, type HandOverOutcome, type PlacedEntry } from './group-hand-over.js'
import { startHeartbeat, type Heartbeat } from './lease-heartbeat.js'
import { writePatiently } from './patient-write.js'
import { prepareHandOver, type HandOverSettings, type PreparedHandOver } from './prepare-hand-over.js'
import type { UnlessOutage } from './unless-outage.js'

/**
 * One attempt at one claimed message: keep its lease alive, hand it over (lib/dispatch/prepare-hand-over.ts),
 * call the provider outside any transaction (lib/dispatch/group-hand-over.ts), record the outcome under the
 * claim token (lib/dispatch/attempt-outcome.ts), then tell the provider it was recorded. Nothing here is
 * mutable: everything an attempt shares with the others is in its context, fixed when the dispatcher is made.
 */

/** What every attempt of one dispatcher shares. */
export interface AttemptContext {
  db: Kysely<DB>
  provider: SmsProvider
  log: FastifyBaseLogger
  metrics: MetricsRecorder
  leaseSeconds: number
  /** One provider call's time limit and a margin: before each call the lease must surely outlast it. */
  callBudgetMs: number
  /** How long a provider answer whose recording fails is kept and its recording retried. */
  recordPatienceMs: number
  handOver: HandOverSettings
  outcomes: Pick<OutcomeWriter, 'record'>
  /** Where the delivery reports a provider produces itself go (the webhook's code path). */
  reportDeliveries: ReportDeliveries
  unlessOutage: UnlessOutage
  /** Aborted by stop(): a claim whose attempt starts after it is given back untouched. */
  stopping: AbortSignal
  /** Aborted once stop()'s grace is spent: a recording still failing then is given up. */
  stopGraceOver: AbortSignal
}

export type AttemptKind = 'accepted' | 'rejected' | 'retryable' | 'unresolved'

type Recorded = { prepared: PreparedHandOver; outcome: HandOverOutcome }

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

/** Gives a claim back untouched, PENDING; a failure is logged, and the lease lapses instead. */
async function release(ctx: AttemptContext, claim: Claim): Promise<void> {
  await withTenant(ctx.db, claim.tenantId, (trx) => releaseClaim(trx, claim)).catch((error: unknown) =>
    ctx.unlessOutage(error, () => ctx.log.error({ err: error, smsId: claim.smsId }, 'could not release dispatch claim')),
  )
}

function keepLeaseAlive(ctx: AttemptContext, claim: Claim, claimedAt: number): Heartbeat {
  const { db, log, leaseSeconds } = ctx
  return startHeartbeat({
    leaseSeconds,
    claimedAt,
    renew: () => withTenant(db, claim.tenantId, (trx) => renewLease(trx, claim, leaseSeconds)),
    onLost: () => log.warn({ smsId: claim.smsId }, 'dispatch claim taken over while its attempt ran'),
    onError: (error) => ctx.unlessOutage(error, () => log.warn({ err: error, smsId: claim.smsId }, 'could not renew the dispatch lease')),
  })
}

/** Records the group before any message is added to it, with the outcomes of a group read back before it. */
async function recordGroup(ctx: AttemptContext, claim: Claim, groupId: string, known: PlacedEntry[]): Promise<void> {
  const held = await withTenant(ctx.db, claim.tenantId, async (trx) => {
    if (!(await recordOpenGroup(trx, claim, groupId))) return false
    await recordRecipientOutcomes(trx, claim.smsId, known.map(recipientOutcome))
    return true
  })
  if (!held) throw new HandOverStopped('the claim was taken over')
}

/**
 * The outcome exists only in this process now: a failed write (database restart, lost connection) is retried as a
 * write while the heartbeat keeps the lease, never as a new send. Given up (patience or, on shutdown, the grace
 * spent), it is logged whole with its groups; the group this attempt recorded stays open, so whoever holds the
 * message next reads it back and nothing is sent twice.
 */
async function recordPatiently(ctx: AttemptContext, claim: Claim, { prepared, outcome }: Recorded, answeredAt: Date): Promise<boolean> {
  const { db, log } = ctx
  const context = { tenantId: claim.tenantId, smsId: claim.smsId, attempt: prepared.attempt, groups: groupsOf(outcome) }
  let recorded: boolean
  try {
    recorded = await writePatiently(
      () => withTenant(db, claim.tenantId, (trx) => ctx.outcomes.record(trx, claim, prepared.attempt, outcome, answeredAt)),
      ctx.recordPatienceMs,
      // Kept per retry (it names the groups an operator reconciles by), but without a stack: the cause is the outage.
      (error, delayMs) =>
        log.warn({ ...errorSummary(error), ...context, delayMs }, 'could not record the provider outcome; retrying the write, not the send'),
      ctx.stopGraceOver,
    )
  } catch (error) {
    log.error({ err: error, ...context, answeredAt, outcome }, 'provider outcome given up unrecorded: the next holder reads its groups back')
    throw error
  }
  if (!recorded) log.warn({ ...context, outcome }, 'dispatch claim lost before the outcome was recorded: the next holder reads its groups back')
  return recorded
}

/** Hands the message over and records the outcome; what was recorded, or null when nothing was (held, lost). */
async function handOverAndRecord(ctx: AttemptContext, claim: Claim, lease: Heartbeat): Promise<Recorded | null> {
  const { log, provider } = ctx
  let prepared: PreparedHandOver | null
  try {
    prepared = await withTenant(ctx.db, claim.tenantId, (trx) => prepareHandOver(trx, claim, ctx.handOver))
  } catch (error) {
    // Whether the hand-over committed is unknown; the release only succeeds if it did not.
    await release(ctx, claim)
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
      lease.ensure(ctx.callBudgetMs).catch((error: unknown) => {
        throw new HandOverStopped(error instanceof Error ? error.message : String(error))
      }),
    recordGroup: (groupId, known) => recordGroup(ctx, claim, groupId, known),
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
  if (prepared.request.messages.length > 0) ctx.metrics.providerCall(attemptKind(outcome), (performance.now() - startedAt) / 1000)
  const recorded = { prepared, outcome }
  return (await recordPatiently(ctx, claim, recorded, new Date())) ? recorded : null
}

/** Tells the provider which group it sent was recorded, with what it took (the mock reports those delivered). */
async function afterRecorded(ctx: AttemptContext, { prepared, outcome }: Recorded): Promise<void> {
  const groupId = outcome.sentGroupId
  if (groupId === null) return
  const taken = outcome.entries.filter((entry) => entry.groupId === groupId && entry.messageId !== null)
  const { tenantSlug, smsId, kind } = prepared.request
  await ctx.provider.afterRecorded?.({ owner: { tenantSlug, smsId, kind }, groupId, taken }, ctx.reportDeliveries)
}

/**
 * Runs one attempt at a claimed message, from the claim until its outcome is recorded (or given up). Resolves with
 * the attempt's outcome, or null when nothing was recorded (held, released, claim lost, stopped); rejects when it
 * failed, and the claim's lease then lapses.
 */
export async function runAttempt(ctx: AttemptContext, claim: Claim, claimedAt: number): Promise<AttemptKind | null> {
  if (ctx.stopping.aborted) {
    await release(ctx, claim)
    return null
  }
  // From the claim until the outcome is recorded (or given up), however long the provider or the database takes.
  const lease = keepLeaseAlive(ctx, claim, claimedAt)
  let recorded: Recorded | null
  try {
    recorded = await handOverAndRecord(ctx, claim, lease)
  } finally {
    lease.stop()
  }
  if (!recorded) return null
  await afterRecorded(ctx, recorded)
  return attemptKind(recorded.outcome)
}
