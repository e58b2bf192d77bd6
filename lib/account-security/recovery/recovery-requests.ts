import type { FastifyBaseLogger } from 'fastify'
import type { DatabaseOutage } from '../../observability/database-outage.js'
import { requestPasswordReset, type RecoveryDeps, type RecoveryEntry } from './password-recovery.js'

/**
 * POST /v1/password/forgot's work, done after its answer has left: the answer is the same for every account, and
 * so is the time it takes, since nothing about the account is looked up before it is sent. What a code costs (the
 * lookups, the limits, the SMS queued) happens afterwards, where no client can time it.
 */
export interface RecoveryRequests {
  /** Takes a request; its work starts once the current answer is on its way. */
  accept(entry: RecoveryEntry, log: FastifyBaseLogger): void
  /** Resolves once every request taken so far has been worked off (shutdown, tests). */
  settled(): Promise<void>
}

export interface RecoveryRequestOptions {
  /** Told of each request that queued a code (the dispatcher's kick). */
  onQueued: () => void
  /** Requests in the works at once at most; default 256. */
  limit?: number
  /** Where failures while the database is out of reach are counted; without it each is logged as an error. */
  outage?: Pick<DatabaseOutage, 'absorbs'>
}

/**
 * At most `limit` requests in the works at once: a flood of them (from many addresses, each within its budget) waits
 * for pooled connections like any request, and beyond the limit a request is dropped with a warning rather than
 * queued without end. Its client got the same answer as always; a real user asks again. A request that fails because
 * the database is out of reach counts in `outage` (one warning for the whole outage) instead of an error each.
 */
export function recoveryRequests(deps: RecoveryDeps, { onQueued, limit = 256, outage }: RecoveryRequestOptions): RecoveryRequests {
  const inFlight = new Set<Promise<void>>()
  return {
    accept(entry, log) {
      if (inFlight.size >= limit) {
        log.warn({ inFlight: inFlight.size }, 'password recovery: too many requests in the works, one dropped')
        return
      }
      const work: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => requestPasswordReset(deps, entry))
        .then((queued) => {
          if (queued) onQueued()
        })
        .catch((error: unknown) => {
          if (!outage?.absorbs('recovery', error)) log.error({ err: error }, 'password recovery request failed')
        })
        .finally(() => inFlight.delete(work))
      inFlight.add(work)
    },
    async settled() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
    },
  }
}
