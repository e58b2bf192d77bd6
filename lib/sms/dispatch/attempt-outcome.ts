import type { FastifyBaseLogger } from 'fastify'
import {
  failPendingRecipients,
  findClaimedMessage,
  finishAttempt,
  lockOwnClaim,
  recordRecipientOutcomes,
  tallyRecipients,
  type Claim,
  type DispatchUpdate,
  type OwnClaim,
  type RecipientOutcome,
  type RecipientTally,
} from '../../../db/repos/dispatch.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import { systemClock, type Clock } from '../../clock.js'
import { DEFAULT_TIME_ZONE } from '../../env.js'
import type { MetricsRecorder } from '../../observability/metrics.js'
import { aggregateStatus } from '../delivery-status.js'
import type { SendResult } from '../providers/provider.js'
import { advertisingAllowedFrom } from '../quiet-hours.js'
import { retryDelaySeconds } from './backoff.js'

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
  /** Writes an attempt's answer; false (and nothing written) when the claim was lost. */
  record(trx: TenantTx, claim: Claim, attempt: number, result: SendResult, answeredAt: Date): Promise<boolean>
  /**
   * Ends a claimed message the hand-over refused because it can never be sent: past its discard_after, or its
   * attempts used up without any being recorded. Nothing for a held message or a lost claim.
   */
  failUnsendable(trx: TenantTx, claim: Claim): Promise<void>
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
   * none was recorded (its instance died each time) ends instead of sending again. A lost claim changes nothing.
   */
  async function failUnsendable(trx: TenantTx, claim: Claim): Promise<void> {
    const message = await findClaimedMessage(trx, claim)
    if (!message || !(message.expired || message.dispatchAttempts >= options.maxAttempts)) return
    const own = await lockOwnClaim(trx, claim)
    if (!own) return
    if (message.expired) {
      const reason = `expired at ${message.discardAfter!.toISOString()} before it was handed to the provider`
      await failPendingRecipients(trx, claim.smsId, reason)
      await finish(trx, claim, own, message.dispatchAttempts, { lastProviderError: reason })
      return
    }
    await finish(trx, claim, own, message.dispatchAttempts, {
      lastProviderError: `no outcome recorded for attempt ${message.dispatchAttempts} (the dispatching instance stopped)`,
    })
  }

  function settledStatus(tally: RecipientTally): DispatchUpdate['status'] {
    if (tally.dispatched > 0) return 'DISPATCHED'
    return aggregateStatus({ DELIVERED: tally.delivered, FAILED: tally.failed }) ?? 'FAILED'
  }

  /**
   * Ends the claim: PENDING with a retry time while recipients remain and attempts are left, else settled. A retry
   * that would come after the message's discard_after is not scheduled: the message ends FAILED now.
   */
  async function finish(trx: TenantTx, claim: Claim, own: OwnClaim, attempt: number, update: Partial<DispatchUpdate>): Promise<void> {
    let tally = await tallyRecipients(trx, claim.smsId)
    const retryAt = retryTime(own, attempt)
    if (tally.pending > 0) {
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
      status: retry ? 'PENDING' : settledStatus(tally),
      ...(retry ? { nextAttemptAt: retryAt } : {}),
      successCount: tally.delivered,
      failCount: tally.failed,
      confirmed: !retry && tally.dispatched === 0,
    })
  }

  /** Writes the attempt's outcome; only the claim holder may (results of a lost claim are dropped). */
  async function record(trx: TenantTx, claim: Claim, attempt: number, result: SendResult, answeredAt: Date): Promise<boolean> {
    const own = await lockOwnClaim(trx, claim)
    if (!own) {
      log.warn({ smsId: claim.smsId }, 'dispatch claim lost before results were recorded')
      return false
    }
    const update: Partial<DispatchUpdate> = {}
    if (result.kind === 'accepted') {
      const outcomes: RecipientOutcome[] = [
        ...result.accepted.map((entry) => ({
          recipientIndex: entry.recipientIndex,
          status: 'DISPATCHED' as const,
          providerMessageId: entry.messageId,
          providerGroupId: result.groupId,
          statusCode: entry.statusCode,
          statusMessage: null,
        })),
        ...result.refused.map((entry) => ({
          recipientIndex: entry.recipientIndex,
          status: 'FAILED' as const,
          providerMessageId: null,
          providerGroupId: result.groupId,
          statusCode: entry.statusCode,
          statusMessage: entry.statusMessage,
        })),
      ]
      await recordRecipientOutcomes(trx, claim.smsId, outcomes)
      update.providerGroupId = result.groupId
      update.lastProviderError = null
      if (result.accepted.length > 0) update.sentAt = answeredAt
    } else if (result.kind === 'rejected') {
      await failPendingRecipients(trx, claim.smsId, result.error)
      update.lastProviderError = result.error
    } else {
      update.lastProviderError = result.error
    }
    await finish(trx, claim, own, attempt, update)
    return true
  }

  return { record, failUnsendable }
}
