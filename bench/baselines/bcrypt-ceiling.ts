/**
 * Baseline: the bcrypt ceiling. bcrypt.compare (async, on libuv's thread pool at its default size of 4) at the
 * configured cost, with more comparisons queued than threads, counted over a fixed window after a warm-up.
 * Prints one JSON line: {"comparesPerSecond", "cost", "threads", "seconds", "cpuMicros"} (cpuMicros: the process's
 * whole CPU time, all threads, so the harness can tell whether something else took cores meanwhile).
 *
 *   node --import tsx bench/baselines/bcrypt-ceiling.ts [seconds]
 */
import bcrypt from 'bcrypt'

const seconds = Number(process.argv[2] ?? 10)
const cost = Number(process.env.SVC_BCRYPT_COST ?? 10)
const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4)
const IN_FLIGHT = 16
const WARMUP_MS = 1000

const hash = await bcrypt.hash('Bench-Passw0rd-2026', cost)
let counting = false
let stopped = false
let completed = 0

async function worker(): Promise<void> {
  while (!stopped) {
    if (!(await bcrypt.compare('Bench-Passw0rd-2026', hash))) throw new Error('compare failed')
    if (counting) completed++
  }
}

const workers = Array.from({ length: IN_FLIGHT }, worker)
await new Promise((resolve) => setTimeout(resolve, WARMUP_MS))
counting = true
const started = performance.now()
await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
counting = false
const elapsed = (performance.now() - started) / 1000
stopped = true
await Promise.all(workers)
const cpu = process.cpuUsage()
console.log(JSON.stringify({ comparesPerSecond: completed / elapsed, cost, threads, seconds: elapsed, cpuMicros: cpu.user + cpu.system }))
