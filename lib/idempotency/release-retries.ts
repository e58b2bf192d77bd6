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
  /** The wait before the first background pass; it doubles after each failed pass, up to `maxDelayMs`. */
  firstDelayMs?: number
  maxDelayMs?: number
}

export interface ReleaseRetries {
  /**
   * Gives the claim back now. When the database cannot be reached, resolves all the same and keeps trying in the
   * background until it works or the claim's seconds have passed; rejects only for any other error.
   */
  release(claim: Claim): Promise<void>
  /** Claims waiting to be given back in the background. */
  readonly pending: number
  /** Ends the background tries (on close); the keys left are free once their claim seconds have passed. */
  stop(): Promise<void>
}

const FIRST_DELAY_MS = 100
const MAX_DELAY_MS = 2000

const claimFields = ({ scope }: Claim) => ({ tenantId: scope.tenantId, userId: scope.userId, route: scope.route, key: scope.key })

/**
 * A request that ends without a commit gives its key back so the client can retry at once. When the database is out
 * of reach at that moment, the key would otherwise stay IN_PROGRESS and every retry would answer
 * IDEMPOTENCY_REQUEST_IN_PROGRESS until the takeover rule frees it: the release is tried again, with backoff and off
 * the request's path, for as long as it can still make a difference. In an outage every refused request that held a
 * key comes through here, so the keys wait in one queue that a single pass works through, one key at a time, and a
 * pass ends at its first failure: the background never holds more than one pooled connection, and never crowds out
 * the requests when the database comes back. One warning per key, no stack.
 */
export function createReleaseRetries(options: ReleaseRetriesOptions): ReleaseRetries {
  const { log, claimSeconds } = options
  const firstDelayMs = options.firstDelayMs ?? FIRST_DELAY_MS
  const maxDelayMs = options.maxDelayMs ?? MAX_DELAY_MS
  const waiting = new Set<Claim>()
  let timer: NodeJS.Timeout | null = null
  let pass: Promise<void> | null = null
  let delayMs = firstDelayMs
  let stopped = false

  // The stamp is the database's clock, the deadline this process's: a skew only moves the last try, and past the
  // claim seconds the takeover rule frees the key anyway.
  const expired = (claim: Claim) => Date.now() >= claim.stamp.getTime() + claimSeconds * 1000

  async function runPass(): Promise<void> {
    for (const claim of waiting) {
      if (stopped) return
      if (expired(claim)) {
        waiting.delete(claim)
        log.debug(claimFields(claim), 'idempotency key left to its claim seconds')
        continue
      }
      try {
        await options.release(claim)
        waiting.delete(claim)
        log.debug(claimFields(claim), 'idempotency key given back after the database came back')
      } catch (error) {
        if (isDatabaseUnavailable(error)) {
          delayMs = Math.min(delayMs * 2, maxDelayMs)
          return
        }
        waiting.delete(claim)
        log.error({ err: error, ...claimFields(claim) }, 'could not give an idempotency key back')
      }
    }
    delayMs = firstDelayMs
  }

  function schedule(): void {
    if (stopped || timer || pass || waiting.size === 0) return
    timer = setTimeout(() => {
      timer = null
      pass = runPass().finally(() => {
        pass = null
        schedule()
      })
    }, delayMs)
  }

  return {
    async release(claim) {
      try {
        await options.release(claim)
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error
        const fields = { ...claimFields(claim), ...errorSummary(error), claimSeconds }
        log.warn(fields, 'could not give an idempotency key back; retrying in the background')
        if (stopped || expired(claim)) return
        waiting.add(claim)
        schedule()
      }
    },
    get pending() {
      return waiting.size
    },
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      timer = null
      waiting.clear()
      // A pass under way holds a pooled connection: it ends before the pool does.
      await pass
    },
  }
}
