import type { FastifyBaseLogger } from 'fastify'
import {
  failPendingRecipients,
  finishAttempt,
  lockOwnClaim,
  recordRecipientOutcomes,
  tallyRecipients,
  type Claim,
  type DispatchUpdate,
  type OwnClaim,
  type RecipientOutcome,
  type RecipientTally,
  type UnsentClaim,
} from '../../db/repos/dispatch/dispatch.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { systemClock, type Clock } from '../clock.js'
import { DEFAULT_TIME_ZONE } from '../env.js'
import type { MetricsRecorder } from '../observability/metrics.js'
import { aggregateStatus, deliveryStatusForCode } from './delivery/delivery-status.js'
import { advertisingAllowedFrom } from '../advertising/quiet-hours.js'
import { retryDelaySeconds } from './backoff.js'
import type { HandOverOutcome, PlacedEntry } from './group-hand-over.js'

/** A group's entry as its recipient's row: taken (on its way, or already delivered) or refused, for good. */
export function recipientOutcome(entry: PlacedEntry): RecipientOutcome {
  const status = deliveryStatusForCode(entry.statusCode)
  return {
    recipientIndex: entry.recipientIndex,
    status,
    providerMessageId: entry.messageId,
    providerGroupId: entry.groupId,
    statusCode: entry.statusCode,
    statusMessage: status === 'FAILED' ? entry.statusMessage : null,
  }
}

export interface OutcomeOptions {
  maxAttempts: number
  retryBaseSeconds: number
  log: FastifyBaseLogger
  metrics?: MetricsRecorder
  /** When a retry falls due is counted from this clock (default the system's). */
  clock?: Clock
  /** SVC_TIME_ZONE: an advertisement's retry that falls in its quiet hours waits for 08:00 (default Asia/Seoul). */
  timeZone?: string
}

export interface OutcomeWriter {
  /** Writes an attempt's outcome; false (and nothing written) when the claim was lost. */
  record(trx: TenantTx, claim: Claim, attempt: number, outcome: HandOverOutcome, answeredAt: Date): Promise<boolean>
  /**
   * Why a claimed message the hand-over refused can never be sent (past its discard_after, or its attempts used up
   * without any being recorded), or null: held, or the claim lost.
   */
  unsendableReason(message: UnsentClaim): string | null
  /** Ends such a message FAILED with `reason` (nothing for a lost claim). */
  failUnsendable(trx: TenantTx, claim: Claim, attempt: number, reason: string): Promise<void>
}

/** How an attempt ends a claim: recipient outcomes, the retry or the settled status, all under the claim token. */
export function createOutcomeWriter(options: OutcomeOptions): OutcomeWriter {
  const { log } = options
  const clock = options.clock ?? systemClock
  const timeZone = options.timeZone ?? DEFAULT_TIME_ZONE

  /** The backoff's time, or for an advertisement the end of the quiet hours it would fall in. */
  function retryTime(own: OwnClaim, attempt: number): Date {
    const backoff = new Date(clock().getTime() + retryDelaySeconds(attempt, options.retryBaseSeconds) * 1000)
    return own.purpose === 'ADVERTISEMENT' ? advertisingAllowedFrom(backoff, timeZone) : backoff
  }

  /**
   * A message past its discard_after ends FAILED without being sent, held or not (the claim takes expired messages
   * even when held, for this). One that could not be handed over because every attempt reached the provider and
   * none was recorded (its instance died each time) ends instead of sending again.
   */
  function unsendableReason(message: UnsentClaim): string | null {
    if (message.expired) return `expired at ${message.discardAfter!.toISOString()} before it was handed to the provider`
    if (message.dispatchAttempts >= options.maxAttempts) {
      // With a group open, the last attempt's outcome was unknown, and its group is read back before this applies.
      if (message.openGroupId !== null) return `retries exhausted: attempt ${message.dispatchAttempts} left group ${message.openGroupId} unresolved`
      return `no outcome recorded for attempt ${message.dispatchAttempts} (the dispatching instance stopped)`
    }
    return null
  }

  async function failUnsendable(trx: TenantTx, claim: Claim, attempt: number, reason: string): Promise<void> {
    const own = await lockOwnClaim(trx, claim)
    if (!own) return
    await failPendingRecipients(trx, claim.smsId, reason)
    await finish(trx, claim, own, attempt, { lastProviderError: reason, openGroupId: null })
  }

  function settledStatus(tally: RecipientTally): DispatchUpdate['status'] {
    if (tally.dispatched > 0) return 'DISPATCHED'
    return aggregateStatus({ DELIVERED: tally.delivered, FAILED: tally.failed }) ?? 'FAILED'
  }

  /**
   * Ends the claim: PENDING with a retry time while recipients remain and attempts are left, else settled. A retry
   * that would come after the message's discard_after is not scheduled: the message ends FAILED now. A message whose
   * group is unresolved never ends while it is: its recipients may be on their way, and only the group can say.
   */
  async function finish(trx: TenantTx, claim: Claim, own: OwnClaim, attempt: number, update: Partial<DispatchUpdate>): Promise<void> {
    let tally = await tallyRecipients(trx, claim.smsId)
    const retryAt = retryTime(own, attempt)
    const unresolved = (update.openGroupId ?? null) !== null
    if (tally.pending > 0 && !unresolved) {
      const lastError = update.lastProviderError ?? 'not confirmed'
      const endedBy =
        attempt >= options.maxAttempts
          ? `retries exhausted: ${lastError}`
          : own.discardAfter !== null && retryAt >= own.discardAfter
            ? `expired before its next attempt: ${lastError}`
            : null
      if (endedBy !== null) {
        await failPendingRecipients(trx, claim.smsId, endedBy)
        tally = await tallyRecipients(trx, claim.smsId)
      }
    }
    const retry = tally.pending > 0
    if (retry) options.metrics?.retry()
    await finishAttempt(trx, claim, {
      ...update,
      openGroupId: retry ? (update.openGroupId ?? null) : null,
      status: retry ? 'PENDING' : settledStatus(tally),
      ...(retry ? { nextAttemptAt: retryAt } : {}),
      successCount: tally.delivered,
      failCount: tally.failed,
      confirmed: !retry && tally.dispatched === 0,
    })
  }

  /** Writes the attempt's outcome; only the claim holder may (results of a lost claim are dropped). */
  async function record(trx: TenantTx, claim: Claim, attempt: number, outcome: HandOverOutcome, answeredAt: Date): Promise<boolean> {
    const own = await lockOwnClaim(trx, claim)
    if (!own) return false
    await recordRecipientOutcomes(trx, claim.smsId, outcome.entries.map(recipientOutcome))
    const { rest } = outcome
    const update: Partial<DispatchUpdate> = { openGroupId: rest.kind === 'unresolved' ? rest.groupId : null }
    const lastGroup = outcome.sentGroupId ?? outcome.entries.at(-1)?.groupId ?? null
    if (lastGroup !== null) update.providerGroupId = lastGroup
    if (outcome.entries.some((entry) => deliveryStatusForCode(entry.statusCode) !== 'FAILED')) update.sentAt = answeredAt
    if (rest.kind === 'rejected') await failPendingRecipients(trx, claim.smsId, rest.error)
    update.lastProviderError = rest.kind === 'none' || rest.kind === 'stopped' ? null : rest.error
    await finish(trx, claim, own, attempt, update)
    return true
  }

  return { record, unsendableReason, failUnsendable }
}
