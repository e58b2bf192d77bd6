import type { FastifyBaseLogger } from 'fastify'
import type { Claim } from '../../db/repos/dispatch/dispatch.js'
import type { UnlessOutage } from './unless-outage.js'
import type { AttemptResult, WorkerPool } from './worker-pool.js'

export interface ClaimLoopOptions {
  /** Where each claim's attempt runs; the loop claims only for its free workers. */
  pool: Pick<WorkerPool, 'free' | 'run'>
  /** Claims up to `count` due messages across tenants, ids only (db/repos/dispatch/dispatch.ts). */
  claimDue(count: number): Promise<Claim[]>
  /** Messages claimed by one claim at most, and by one pass at most. */
  batchSize: number
  /** Aborted by stop(): no claim starts after it. */
  stopping: AbortSignal
  log: FastifyBaseLogger
  unlessOutage: UnlessOutage
}

/**
 * The one claim loop, which the service kicks and runOnce drives. It claims as many due messages as there are free
 * workers (never more than a batch at once) and starts each on a worker the moment it is claimed; a worker that
 * finishes claims again at once if there may be more, so a slow provider call holds one worker, never the others'
 * next claims. One claim runs at a time: kicks while it runs are folded into one more. The fields below are the
 * loop's whole state.
 */
export class ClaimLoop {
  /** A kick arrived, or the last claim was full: there may be due work that no claim has looked for yet. */
  private backlog = false
  /** The claim running now. */
  private claiming: Promise<void> | null = null
  /** Messages the loop may still claim: unbounded once the service kicks it, a batch for a pass (runOnce). */
  private allowance = 0
  /** Messages claimed since the loop was made: a pass reports how many it saw claimed. */
  private claimed = 0
  /** Claims whose attempts have not all ended; each ends with its 'dispatch batch' line. */
  private readonly rounds = new Set<Promise<void>>()
  /** Passes waiting for the loop to rest: no claim running and every round ended. */
  private restWaiters: (() => void)[] = []

  constructor(private readonly options: ClaimLoopOptions) {}

  /** Claims due work for every free worker now, and goes on claiming as workers free while more may be due. */
  kick(): void {
    if (this.options.stopping.aborted) return
    this.allowance = Infinity
    this.backlog = true
    this.claimSoon()
  }

  /**
   * Runs the loop until it rests (nothing more due, or a batch claimed since the service has not kicked it), waiting
   * for every attempt it started, whoever kicked it; resolves with how many messages were claimed meanwhile.
   */
  async pass(): Promise<number> {
    const before = this.claimed
    if (!this.options.stopping.aborted) {
      this.allowance = Math.max(this.allowance, this.options.batchSize)
      this.backlog = true
      this.claimSoon()
    }
    await this.rest()
    return this.claimed - before
  }

  /** Resolves once the claim running now, if any, has ended (stop() then waits for the attempts). */
  async claimEnded(): Promise<void> {
    await this.claiming
  }

  private mayClaim(): boolean {
    return this.backlog && !this.options.stopping.aborted && this.options.pool.free > 0 && this.allowance > 0
  }

  private claimSoon(): void {
    if (this.claiming) return
    const { log, unlessOutage } = this.options
    this.claiming = this.claimForFreeWorkers()
      .catch((error: unknown) => unlessOutage(error, () => log.error({ err: error }, 'dispatch claim failed')))
      .finally(() => {
        this.claiming = null
        // A worker freed (or a kick) while this claim ran still gets its claim.
        if (this.mayClaim()) this.claimSoon()
        else this.wakeIfResting()
      })
  }

  private async claimForFreeWorkers(): Promise<void> {
    const { pool } = this.options
    while (this.mayClaim()) {
      this.backlog = false
      const wanted = Math.min(pool.free, this.options.batchSize, this.allowance)
      const claimedAt = performance.now()
      const claims = await this.options.claimDue(wanted)
      this.allowance -= claims.length
      this.claimed += claims.length
      if (claims.length === wanted) this.backlog = true
      if (claims.length === 0) return
      this.startRound(claims.map((claim) => pool.run(claim, claimedAt, () => this.workerFreed())))
    }
  }

  private workerFreed(): void {
    if (this.mayClaim()) this.claimSoon()
  }

  /** The one line an operator reads per claim: what was claimed and how the attempts ended. */
  private startRound(running: Promise<AttemptResult>[]): void {
    const round = Promise.all(running).then((results) => {
      const count = (result: AttemptResult) => results.filter((each) => each === result).length
      this.options.log.info(
        {
          claimed: results.length,
          sent: count('accepted'),
          retrying: count('retryable'),
          unresolved: count('unresolved'),
          failed: count('rejected') + count('failed'),
          notSent: count(null),
        },
        'dispatch batch',
      )
    })
    this.rounds.add(round)
    void round.finally(() => {
      this.rounds.delete(round)
      this.wakeIfResting()
    })
  }

  private rest(): Promise<void> {
    if (this.claiming === null && this.rounds.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.restWaiters.push(resolve))
  }

  private wakeIfResting(): void {
    if (this.claiming !== null || this.rounds.size > 0) return
    const waiters = this.restWaiters
    this.restWaiters = []
    for (const wake of waiters) wake()
  }
}
