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
  type RecipientOutcome,
  type RecipientTally,
} from '../../../db/repos/dispatch.js'
import type { TenantTx } from '../../../db/tenant.js'
import type { MetricsRecorder } from '../../observability/metrics.js'
import { aggregateStatus } from '../delivery-status.js'
import type { SendResult } from '../providers/provider.js'
import { retryDelaySeconds } from './backoff.js'

export interface OutcomeOptions {
  maxAttempts: number
  retryBaseSeconds: number
  log: FastifyBaseLogger
  metrics?: MetricsRecorder
}

export interface OutcomeWriter {
  /** Writes an attempt's answer; false (and nothing written) when the claim was lost. */
  record(trx: TenantTx, claim: Claim, attempt: number, result: SendResult, answeredAt: Date): Promise<boolean>
  /** Ends a message whose attempts are used up without any being recorded; nothing when the claim was lost. */
  failExhausted(trx: TenantTx, claim: Claim): Promise<void>
}

/** How an attempt ends a claim: recipient outcomes, the retry or the settled status, all under the claim token. */
export function createOutcomeWriter(options: OutcomeOptions): OutcomeWriter {
  const { log } = options

  /**
   * A claim that could not be handed over because every attempt reached the provider and none was recorded (its
   * instance died each time) ends the message instead of sending again. A lost claim changes nothing.
   */
  async function failExhausted(trx: TenantTx, claim: Claim): Promise<void> {
    const message = await findClaimedMessage(trx, claim)
    if (!message || message.dispatchAttempts < options.maxAttempts || !(await lockOwnClaim(trx, claim))) return
    await finish(trx, claim, message.dispatchAttempts, {
      lastProviderError: `no outcome recorded for attempt ${message.dispatchAttempts} (the dispatching instance stopped)`,
    })
  }

  function settledStatus(tally: RecipientTally): DispatchUpdate['status'] {
    if (tally.dispatched > 0) return 'DISPATCHED'
    return aggregateStatus({ DELIVERED: tally.delivered, FAILED: tally.failed }) ?? 'FAILED'
  }

  /** Ends the claim: PENDING with a retry time while recipients remain and attempts are left, else settled. */
  async function finish(trx: TenantTx, claim: Claim, attempt: number, update: Partial<DispatchUpdate>): Promise<void> {
    let tally = await tallyRecipients(trx, claim.smsId)
    if (tally.pending > 0 && attempt >= options.maxAttempts) {
      await failPendingRecipients(trx, claim.smsId, `retries exhausted: ${update.lastProviderError ?? 'not confirmed'}`)
      tally = await tallyRecipients(trx, claim.smsId)
    }
    const retry = tally.pending > 0
    if (retry) options.metrics?.retry()
    await finishAttempt(trx, claim, {
      ...update,
      status: retry ? 'PENDING' : settledStatus(tally),
      ...(retry ? { nextAttemptAt: new Date(Date.now() + retryDelaySeconds(attempt, options.retryBaseSeconds) * 1000) } : {}),
      successCount: tally.delivered,
      failCount: tally.failed,
      confirmed: !retry && tally.dispatched === 0,
    })
  }

  /** Writes the attempt's outcome; only the claim holder may (results of a lost claim are dropped). */
  async function record(trx: TenantTx, claim: Claim, attempt: number, result: SendResult, answeredAt: Date): Promise<boolean> {
    if (!(await lockOwnClaim(trx, claim))) {
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
    await finish(trx, claim, attempt, update)
    return true
  }

  return { record, failExhausted }
}
