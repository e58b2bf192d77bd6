// Preloaded (`node --expose-gc --require`) into the service by the memory scenario only, never in production: on
// SIGUSR2 the process collects all its garbage and prints the V8 heap it keeps, as one numbered JSON line (the scenario
// reads RSS itself, a moment later). Read at two points, that is the retained memory, whichever phase of its
// collection cycle the heap was in when the load stopped.
'use strict'
let reports = 0
process.on('SIGUSR2', () => {
  // Twice: the first full collection may leave garbage that only finalisers of the first made unreachable.
  globalThis.gc()
  globalThis.gc()
  reports += 1
  process.stdout.write(`${JSON.stringify({ benchCollected: { report: reports, heapUsed: process.memoryUsage().heapUsed } })}\n`)
})
