import { setTimeout as sleep } from 'node:timers/promises'

const FIRST_DELAY_MS = 250
const MAX_DELAY_MS = 5_000

/**
 * Retries a database write with doubling delays until it succeeds, `patienceMs` has passed or `giveUp` is aborted
 * (then, after one last try, the last error is thrown). For writes whose input cannot be produced again without a
 * side effect, such as a provider answer: repeating the write is safe, repeating the send is not.
 */
export async function writePatiently<T>(
  write: () => Promise<T>,
  patienceMs: number,
  onRetry: (error: unknown, delayMs: number) => void,
  giveUp?: AbortSignal,
): Promise<T> {
  const giveUpAt = Date.now() + patienceMs
  for (let delay = FIRST_DELAY_MS; ; delay = Math.min(delay * 2, MAX_DELAY_MS)) {
    try {
      return await write()
    } catch (error) {
      if (giveUp?.aborted || Date.now() + delay > giveUpAt) throw error
      onRetry(error, delay)
      // An abort ends the wait early; the loop's next try is the last.
      await sleep(delay, undefined, { signal: giveUp }).catch(() => undefined)
    }
  }
}
