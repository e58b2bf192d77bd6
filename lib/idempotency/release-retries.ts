import type { FastifyBaseLogger } from 'fastify'
import { isDatabaseUnavailable } from '../../db/errors.js'
import { errorSummary } from '../observability/error-summary.js'
import type { Claim } from './claims.js'

export interface ReleaseRetriesOptions {
  /** Gives one claim back (releaseClaim over the runtime handle). */
  release(claim: Claim): Promise<void>
  /** SVC_IDEMPOTENCY_CLAIM_SECONDS: past this, the takeover rule frees the key whatever happens here. */
  claimSeconds: number
  log: FastifyBaseLogger
  /** The wait before the first background try; it doubles after each failure, up to `maxDelayMs`. */
  firstDelayMs?: number
  maxDelayMs?: number
}

export interface ReleaseRetries {
  /**
   * Gives the claim back now. When the database cannot be reached, resolves all the same and keeps trying in the
   * background until it works or the claim's seconds have passed; rejects only for any other error.
   */
  release(claim: Claim): Promise<void>
  /** Claims waiting for a background try. */
  readonly pending: number
  /** Ends every background try (on close); their keys are free once their claim seconds have passed. */
  stop(): Promise<void>
}

const FIRST_DELAY_MS = 100
const MAX_DELAY_MS = 2000

const claimFields = ({ scope }: Claim) => ({ tenantId: scope.tenantId, userId: scope.userId, route: scope.route, key: scope.key })

/**
 * A request that ends without a commit gives its key back so the client can retry at once. When the database is out
 * of reach at that moment, the key would otherwise stay IN_PROGRESS and every retry would answer
 * IDEMPOTENCY_REQUEST_IN_PROGRESS until the takeover rule frees it: the release is tried again, with backoff and off
 * the request's path, for as long as it can still make a difference. One warning per key, no stack: in an outage
 * every refused request holding a key comes through here.
 */
export function createReleaseRetries(options: ReleaseRetriesOptions): ReleaseRetries {
  const { log, claimSeconds } = options
  const firstDelayMs = options.firstDelayMs ?? FIRST_DELAY_MS
  const maxDelayMs = options.maxDelayMs ?? MAX_DELAY_MS
  const waiting = new Map<NodeJS.Timeout, Claim>()
  const trying = new Set<Promise<void>>()
  let stopped = false

  function retryLater(claim: Claim, delayMs: number): void {
    // The stamp is the database's clock, the deadline this process's: a skew only moves the last try, and past
    // the claim seconds the takeover rule frees the key anyway.
    const left = claim.stamp.getTime() + claimSeconds * 1000 - Date.now()
    if (stopped || left <= 0) {
      log.debug(claimFields(claim), 'idempotency key left to its claim seconds')
      return
    }
    const timer = setTimeout(() => {
      waiting.delete(timer)
      const attempt = options.release(claim).then(
        () => log.debug(claimFields(claim), 'idempotency key given back after the database came back'),
        (error: unknown) => {
          if (isDatabaseUnavailable(error)) retryLater(claim, Math.min(delayMs * 2, maxDelayMs))
          else log.error({ err: error, ...claimFields(claim) }, 'could not give an idempotency key back')
        },
      )
      trying.add(attempt)
      void attempt.finally(() => trying.delete(attempt))
    }, Math.min(delayMs, left))
    waiting.set(timer, claim)
  }

  return {
    async release(claim) {
      try {
        await options.release(claim)
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error
        const fields = { ...claimFields(claim), ...errorSummary(error), claimSeconds }
        log.warn(fields, 'could not give an idempotency key back; retrying in the background')
        retryLater(claim, firstDelayMs)
      }
    },
    get pending() {
      return waiting.size + trying.size
    },
    async stop() {
      stopped = true
      for (const timer of waiting.keys()) clearTimeout(timer)
      waiting.clear()
      // A try under way holds a pooled connection: it ends before the pool does.
      await Promise.allSettled([...trying])
    },
  }
}
