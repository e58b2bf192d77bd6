import type { FastifyBaseLogger } from 'fastify'
import type { Claim } from '../../db/repos/dispatch/dispatch.js'
import type { AttemptKind } from './attempt.js'
import type { UnlessOutage } from './unless-outage.js'

/** How a worker's attempt ended: its outcome, null when nothing was recorded, 'failed' when it threw. */
export type AttemptResult = AttemptKind | 'failed' | null

export interface WorkerPoolOptions {
  /** Attempts run at the same time (SVC_SMS_DISPATCH_WORKERS). */
  size: number
  /** One attempt at a claim (lib/dispatch/attempt.ts); `claimedAt` is performance.now() when it was claimed. */
  attempt(claim: Claim, claimedAt: number): Promise<AttemptKind | null>
  log: FastifyBaseLogger
  unlessOutage: UnlessOutage
}

/**
 * The dispatcher's workers: how many attempts hold one now, so the claim loop claims only for the free ones, and
 * every attempt not yet ended, so stop() can wait for them. This is the pool's whole state.
 */
export class WorkerPool {
  /** Attempts holding a worker. */
  private busy = 0
  /** Every attempt not yet ended, processClaim's (which hold no worker) too; each entry settles, never rejects. */
  private readonly running = new Set<Promise<void>>()

  constructor(private readonly options: WorkerPoolOptions) {}

  get free(): number {
    return this.options.size - this.busy
  }

  /**
   * Runs a claim's attempt on a worker. Never rejects: a failure is logged and its lease lapses, so the next holder
   * takes the message over. `onFreed` is called once the worker is free again.
   */
  run(claim: Claim, claimedAt: number, onFreed: () => void): Promise<AttemptResult> {
    const { log } = this.options
    this.busy++
    return this.track(claim, claimedAt)
      .catch((error: unknown) => {
        this.options.unlessOutage(error, () =>
          log.error({ err: error, smsId: claim.smsId }, 'dispatch of a message failed; its lease lapses and the next holder takes it over'),
        )
        return 'failed' as const
      })
      .finally(() => {
        this.busy--
        onFreed()
      })
  }

  /** Runs an attempt the caller drives itself (tests): on no worker, waited for by stop(), its failure the caller's. */
  runWithoutWorker(claim: Claim): Promise<AttemptKind | null> {
    return this.track(claim, performance.now())
  }

  /** Resolves once every attempt started so far has ended, whether it succeeded or failed. */
  async ended(): Promise<void> {
    await Promise.allSettled([...this.running])
  }

  private track(claim: Claim, claimedAt: number): Promise<AttemptKind | null> {
    const attempt = this.options.attempt(claim, claimedAt)
    const settled = attempt.then(
      () => undefined,
      () => undefined,
    )
    this.running.add(settled)
    void settled.finally(() => this.running.delete(settled))
    return attempt
  }
}
