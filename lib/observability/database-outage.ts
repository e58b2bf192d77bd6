import type { FastifyBaseLogger } from 'fastify'
import { isDatabaseUnavailable } from '../../db/errors.js'
import { errorSummary } from './error-summary.js'

/**
 * A database outage as this instance sees it, told in two log lines: a `warn` at the first refusal ('database
 * unreachable', the error's code and message, no stack) and an `info` at the first success afterwards ('database
 * reachable again', how long it lasted and what was refused meanwhile). Every refusal in between only counts: in a
 * 10 s outage an instance refuses hundreds of requests, and a stack for each buries the one line that matters.
 */
export interface DatabaseOutage {
  /**
   * A request was answered 503 because the database could not serve it. `elapsedMs`: how long the request had run;
   * one that began before the database came back reports an outage that is already over, and opens none.
   */
  refusedRequest(error: unknown, elapsedMs?: number): void
  /** Work outside requests (dispatch, webhook delivery, maintenance, a probe) failed because the database could not serve it. */
  failedWork(source: string, error: unknown): void
  /**
   * `failedWork` when `error` means the database is out of reach (true); false for any other error, which the caller
   * logs as it would have. One place decides what belongs to the outage, for every background source.
   */
  absorbs(source: string, error: unknown): boolean
  /**
   * A round trip to the database went through (a request transaction committed, a probe or a background claim
   * answered): ends the outage, if one is open. Otherwise one comparison, so the hot path can call it freely.
   */
  reachable(): void
  /** Whether this instance is in an outage now. */
  readonly open: boolean
}

interface Outage {
  startedAt: number
  refusedRequests: number
  failedWork: Record<string, number>
}

export function createDatabaseOutage(log: FastifyBaseLogger, now: () => number = () => performance.now()): DatabaseOutage {
  let outage: Outage | null = null
  let lastRecoveredAt = Number.NEGATIVE_INFINITY

  function failedWork(source: string, error: unknown): void {
    const current = outage ?? begin(source, error)
    current.failedWork[source] = (current.failedWork[source] ?? 0) + 1
  }

  function begin(source: string, error: unknown): Outage {
    log.warn({ source, ...errorSummary(error) }, 'database unreachable')
    return (outage = { startedAt: now(), refusedRequests: 0, failedWork: {} })
  }

  return {
    refusedRequest(error, elapsedMs = 0) {
      if (!outage && now() - elapsedMs < lastRecoveredAt) return
      ;(outage ?? begin('request', error)).refusedRequests++
    },
    failedWork,
    absorbs(source, error) {
      if (!isDatabaseUnavailable(error)) return false
      failedWork(source, error)
      return true
    },
    reachable() {
      if (!outage) return
      const ended = outage
      outage = null
      lastRecoveredAt = now()
      log.info(
        { durationMs: Math.round(lastRecoveredAt - ended.startedAt), refusedRequests: ended.refusedRequests, failedWork: ended.failedWork },
        'database reachable again',
      )
    },
    get open() {
      return outage !== null
    },
  }
}
