/**
 * Keeps one dispatch claim's lease alive while its attempt runs: renews about every lease/3, so two renewals can
 * fail (a slow or restarting database) before the lease runs out and another instance may take the message.
 * A failed renewal is retried at the next beat; a renewal that finds the claim gone ends the heartbeat.
 */
export interface HeartbeatOptions {
  leaseSeconds: number
  /** Extends the lease; false when the claim is no longer this instance's. */
  renew(): Promise<boolean>
  onLost(): void
  onError(error: unknown): void
}

export interface Heartbeat {
  stop(): void
}

export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  let beating = false
  let stopped = false
  const timer = setInterval(() => {
    // One renewal at a time: a renewal stuck on a dead connection must not pile up others behind it.
    if (beating) return
    beating = true
    options
      .renew()
      .then(
        (held) => {
          // A renewal still in flight when the attempt ended finds the claim released: that is not a loss.
          if (held || stopped) return
          clearInterval(timer)
          options.onLost()
        },
        (error: unknown) => {
          if (!stopped) options.onError(error)
        },
      )
      .finally(() => {
        beating = false
      })
  }, (options.leaseSeconds * 1000) / 3)
  return {
    stop() {
      stopped = true
      clearInterval(timer)
    },
  }
}
