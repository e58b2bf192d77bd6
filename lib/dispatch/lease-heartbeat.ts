/**
 * Keeps one dispatch claim's lease alive while its attempt runs: renews about every lease/3, so two renewals can
 * fail (a slow or restarting database) before the lease runs out and another instance may take the message.
 * A failed renewal is retried at the next beat; a renewal that finds the claim gone ends the heartbeat.
 *
 * It also knows, by this process's monotonic clock, until when the lease is surely held: the start of the last
 * renewal that succeeded (or of the claim) plus the lease, never later than the database's own expiry. A provider
 * call is started only while that moment is more than the call's time limit away (`ensure`), so no call of this
 * instance can reach the provider after another instance may have taken the message over.
 */
export interface HeartbeatOptions {
  leaseSeconds: number
  /** performance.now() when the claim was asked for: its lease runs from no earlier than this. */
  claimedAt: number
  /** Extends the lease; false when the claim is no longer this instance's. */
  renew(): Promise<boolean>
  onLost(): void
  onError(error: unknown): void
}

export interface Heartbeat {
  /**
   * Resolves when the lease is surely held for more than `ms`, renewing it first when it is not; rejects with
   * LeaseNotKept when it cannot be (the database is unreachable, or the claim is lost).
   */
  ensure(ms: number): Promise<void>
  stop(): void
}

export class LeaseNotKept extends Error {}

export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  const leaseMs = options.leaseSeconds * 1000
  let heldUntil = options.claimedAt + leaseMs
  let lost = false
  let stopped = false
  let renewing: Promise<boolean> | null = null

  /** One renewal at a time: a renewal stuck on a dead connection must not pile up others behind it. */
  function renewOnce(): Promise<boolean> {
    if (renewing) return renewing
    const startedAt = performance.now()
    renewing = options
      .renew()
      .then((held) => {
        if (held) heldUntil = Math.max(heldUntil, startedAt + leaseMs)
        // A renewal still in flight when the attempt ended finds the claim released: that is not a loss.
        else if (!stopped && !lost) {
          lost = true
          clearInterval(timer)
          options.onLost()
        }
        return held
      })
      .finally(() => {
        renewing = null
      })
    return renewing
  }

  const timer = setInterval(() => {
    renewOnce().catch((error: unknown) => {
      if (!stopped) options.onError(error)
    })
  }, leaseMs / 3)

  return {
    async ensure(ms) {
      if (!lost && heldUntil - performance.now() > ms) return
      if (!lost) {
        try {
          await renewOnce()
        } catch (error) {
          throw new LeaseNotKept(`the lease could not be renewed: ${error instanceof Error ? error.message : String(error)}`)
        }
      }
      if (lost) throw new LeaseNotKept('the claim was taken over')
      if (heldUntil - performance.now() <= ms) throw new LeaseNotKept(`the lease does not outlast a ${ms} ms call`)
    },
    stop() {
      stopped = true
      clearInterval(timer)
    },
  }
}
