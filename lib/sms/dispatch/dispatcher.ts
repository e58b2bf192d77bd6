import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import {
  claimDueMessages,
  failPendingRecipients,
  findClaimedMessage,
  findUnsentRecipients,
  finishAttempt,
  lockOwnClaim,
  recordRecipientOutcomes,
  releaseClaim,
  tallyRecipients,
  type Claim,
  type DispatchUpdate,
  type RecipientOutcome,
  type RecipientTally,
} from '../../../db/repos/dispatch.js'
import type { DB } from '../../../db/schema.js'
import { withTenant, type TenantTx } from '../../../db/tenant.js'
import { applyDeliveryReports } from '../delivery/apply-reports.js'
import { aggregateStatus } from '../delivery-status.js'
import type { SendRequest, SendResult, SmsProvider } from '../providers/provider.js'
import { renderContent } from '../sizing.js'
import { retryDelaySeconds } from './backoff.js'

export interface DispatcherOptions {
  db: Kysely<DB>
  provider: SmsProvider
  log: FastifyBaseLogger
  batchSize: number
  maxAttempts: number
  retryBaseSeconds: number
  /** A claim not finished within the lease (crashed instance) is taken over by any instance. */
  leaseSeconds?: number
  /** Messages of one batch sent to the provider at the same time. */
  concurrency?: number
}

export interface Dispatcher {
  /** Looks for due work now; calls while a pass runs are folded into one more pass. */
  kick(): void
  /** One claim-and-send pass; resolves with the number of messages claimed. */
  runOnce(): Promise<number>
  /** Sends one claimed message; exposed so tests can drive a claim directly. */
  processClaim(claim: Claim): Promise<void>
  /** Stops claiming, lets in-flight sends finish, gives back claims not yet started. */
  stop(): Promise<void>
}

const DEFAULT_LEASE_SECONDS = 120
const DEFAULT_CONCURRENCY = 4

type Prepared = { request: SendRequest; attempts: number }

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { db, provider, log } = options
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  let stopping = false
  let pass: Promise<void> | null = null
  let again = false

  async function prepare(trx: TenantTx, claim: Claim): Promise<Prepared | null> {
    const message = await findClaimedMessage(trx, claim)
    if (!message) return null
    const recipients = await findUnsentRecipients(trx, message.id)
    return {
      attempts: message.dispatchAttempts,
      request: {
        tenantSlug: message.tenantSlug,
        smsId: message.id,
        // Stored content is never rendered; each recipient gets its own personalised text only here.
        messages: recipients.map((recipient) => ({
          recipientIndex: recipient.recipientIndex,
          to: recipient.phone,
          from: message.senderNumber ?? '',
          text: renderContent(message.content, recipient),
          type: message.messageType,
          ...(message.messageType === 'LMS' ? { subject: message.title } : {}),
        })),
      },
    }
  }

  function settledStatus(tally: RecipientTally): DispatchUpdate['status'] {
    if (tally.dispatched > 0) return 'DISPATCHED'
    return aggregateStatus({ DELIVERED: tally.delivered, FAILED: tally.failed }) ?? 'FAILED'
  }

  /** Writes the attempt's outcome; only the claim holder may (results of a lost claim are dropped). */
  async function record(trx: TenantTx, claim: Claim, prepared: Prepared, result: SendResult): Promise<boolean> {
    if (!(await lockOwnClaim(trx, claim))) {
      log.warn({ smsId: claim.smsId }, 'dispatch claim lost before results were recorded')
      return false
    }
    const attempt = prepared.attempts + 1
    const now = new Date()
    const update: Partial<DispatchUpdate> = {}
    if (result.kind === 'accepted') {
      const outcomes: RecipientOutcome[] = [
        ...result.accepted.map((entry) => ({
          recipientIndex: entry.recipientIndex,
          status: 'DISPATCHED' as const,
          providerMessageId: entry.messageId,
          statusCode: entry.statusCode,
          statusMessage: null,
        })),
        ...result.refused.map((entry) => ({
          recipientIndex: entry.recipientIndex,
          status: 'FAILED' as const,
          providerMessageId: null,
          statusCode: entry.statusCode,
          statusMessage: entry.statusMessage,
        })),
      ]
      await recordRecipientOutcomes(trx, claim.smsId, outcomes)
      update.providerGroupId = result.groupId
      update.lastProviderError = null
      if (result.accepted.length > 0) update.sentAt = now
    } else if (result.kind === 'rejected') {
      await failPendingRecipients(trx, claim.smsId, result.error)
      update.lastProviderError = result.error
    } else {
      update.lastProviderError = result.error
    }

    let tally = await tallyRecipients(trx, claim.smsId)
    if (tally.pending > 0 && attempt >= options.maxAttempts) {
      await failPendingRecipients(trx, claim.smsId, `retries exhausted: ${update.lastProviderError ?? 'not confirmed'}`)
      tally = await tallyRecipients(trx, claim.smsId)
    }
    const retry = tally.pending > 0
    await finishAttempt(trx, claim, {
      ...update,
      attemptsIncrement: 1,
      status: retry ? 'PENDING' : settledStatus(tally),
      ...(retry ? { nextAttemptAt: new Date(now.getTime() + retryDelaySeconds(attempt, options.retryBaseSeconds) * 1000) } : {}),
      successCount: tally.delivered,
      failCount: tally.failed,
      confirmed: !retry && tally.dispatched === 0,
    })
    return true
  }

  async function processClaim(claim: Claim): Promise<void> {
    // Fails before any data access when the claim carries no valid tenant (withTenant checks first).
    const prepared = await withTenant(db, claim.tenantId, (trx) => prepare(trx, claim))
    if (!prepared) return
    // The provider is called outside any transaction: no connection or lock is held while it answers.
    let result: SendResult
    try {
      result =
        prepared.request.messages.length > 0
          ? await provider.send(prepared.request)
          : { kind: 'accepted', groupId: null, accepted: [], refused: [] }
    } catch (error) {
      result = { kind: 'retryable', error: `provider adapter failed: ${String(error)}` }
    }
    const recorded = await withTenant(db, claim.tenantId, (trx) => record(trx, claim, prepared, result))
    if (recorded && result.kind === 'accepted' && provider.reportsFor) {
      const reports = provider.reportsFor(prepared.request, result)
      await applyDeliveryReports(db, reports.map((report) => ({ ok: true as const, report })))
    }
  }

  async function release(claim: Claim): Promise<void> {
    await withTenant(db, claim.tenantId, (trx) => releaseClaim(trx, claim)).catch((error: unknown) =>
      log.error({ err: error, smsId: claim.smsId }, 'could not release dispatch claim'),
    )
  }

  async function runOnce(): Promise<number> {
    const claims = await claimDueMessages(db, options.batchSize, leaseSeconds)
    let next = 0
    const worker = async () => {
      while (next < claims.length) {
        const claim = claims[next++]!
        if (stopping) {
          await release(claim)
          continue
        }
        try {
          await processClaim(claim)
        } catch (error) {
          // The claim's lease runs out and another pass retries it.
          log.error({ err: error, smsId: claim.smsId }, 'dispatch of a message failed')
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(concurrency, claims.length) }, worker))
    return claims.length
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
      await pass
    },
  }
}
