import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/**
 * A full collection by V8, without `--expose-gc` on the test runner's command line: once the flag is set, a new
 * context is given `gc`. Node 20 once lost a delivery's time limit to a collection (lib/events/post-event.ts), which
 * a test sees only if collections happen while it waits, as they do in a long-running service.
 */
export const collectGarbage: () => void = (() => {
  if (typeof globalThis.gc === 'function') return globalThis.gc as () => void
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
})()

/** Collects garbage every `everyMs` until the function it answers is called. */
export function collectingGarbage(everyMs = 50): () => void {
  const timer = setInterval(collectGarbage, everyMs)
  return () => clearInterval(timer)
}
