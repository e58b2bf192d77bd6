const MAX_DELAY_SECONDS = 15 * 60

/**
 * Delay before retry number `attempt` (1 = after the first failure): base doubling per attempt, capped at
 * 15 minutes (DECISIONS section 6), with "equal jitter" (half fixed, half random) so instances that failed
 * together do not retry together.
 */
export function retryDelaySeconds(attempt: number, baseSeconds: number, random: () => number = Math.random): number {
  const exponential = Math.min(baseSeconds * 2 ** Math.max(0, attempt - 1), MAX_DELAY_SECONDS)
  return exponential / 2 + random() * (exponential / 2)
}
