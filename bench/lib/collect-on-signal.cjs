// Preloaded (`node --expose-gc --require`) into the service by the memory scenario only, never in production: on
// SIGUSR2 the process collects all its garbage and prints how much memory it keeps, as one JSON line. Read at two
// points, that is the retained memory, whichever phase of its collection cycle the heap was in when the load stopped.
'use strict'
let reports = 0
process.on('SIGUSR2', () => {
  // Twice: the first full collection may leave garbage that only finalisers of the first made unreachable.
  globalThis.gc()
  globalThis.gc()
  const { rss, heapUsed } = process.memoryUsage()
  reports += 1
  process.stdout.write(`${JSON.stringify({ benchCollected: { report: reports, rss, heapUsed } })}\n`)
})
