const MAX_DELAY_SECONDS = 15 * 60
const MAX_JITTER = 0.2

/**
 * Delay before retry number `attempt` (1 = after the first failure): the base delay, doubling per attempt up to
 * 15 minutes (docs/api.md#dispatch-and-retries), plus up to 20 % jitter so instances that failed together do not retry
 * together. Jitter only lengthens: a retry never comes before the documented delay.
 */
export function retryDelaySeconds(attempt: number, baseSeconds: number, random: () => number = Math.random): number {
  const exponential = Math.min(baseSeconds * 2 ** Math.max(0, attempt - 1), MAX_DELAY_SECONDS)
  return exponential * (1 + random() * MAX_JITTER)
}
