import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { onCleanup, spawnTracked } from './cleanup.js'
import { benchConfig } from './config.js'
import { cpuSnapshot, cpuUse, describeCpu, otherCpu, waitForQuiet, type CpuUse } from './cpu.js'
import { analyzeBenchDatabases } from './database.js'
import type { LoadResult, LoadSpec } from './load-spec.js'
import { REPO_ROOT, TSX_IMPORT } from './service.js'

export type { LoadResult, LoadSpec } from './load-spec.js'

let workDir: Promise<string> | null = null

async function scratch(): Promise<string> {
  workDir ??= mkdtemp(join(tmpdir(), 'svc-bench-load-')).then((dir) => {
    onCleanup('remove load scratch files', () => rm(dir, { recursive: true, force: true }))
    return dir
  })
  return workDir
}

let files = 0

/** Writes a (large) request body once, for specs to reference through `bodyFile`. */
export async function bodyFile(contents: string): Promise<string> {
  const path = join(await scratch(), `body-${++files}.json`)
  await writeFile(path, contents)
  return path
}

/** Flushes the writes earlier runs left in PostgreSQL's buffers, so no checkpoint lands in the next run. */
async function checkpoint(): Promise<void> {
  const admin = new pg.Client({ connectionString: benchConfig.pgUrl })
  await admin.connect()
  try {
    await admin.query('checkpoint')
  } finally {
    await admin.end()
  }
}

/**
 * Waits for the machine to be idle apart from the processes under test, and says so when it had to wait. First
 * the planner's statistics as a live database keeps them (analyzeBenchDatabases), then a checkpoint: a write-heavy
 * run (refresh, login) otherwise leaves its flush, and the host's disk work that shows as steal, to whichever run
 * comes next.
 */
export async function quiet(): Promise<void> {
  await analyzeBenchDatabases()
  await checkpoint()
  const { busy, waitedMs } = await waitForQuiet()
  if (waitedMs > 1500) log(`  (waited ${(waitedMs / 1000).toFixed(0)} s for other work on the machine to finish; last second ${busy.toFixed(0)}% busy)`)
}

export interface RunResult extends LoadResult {
  /** CPU of the machine and of the watched processes during the run. */
  cpu: CpuUse
}

/**
 * One autocannon run in a separate process; resolves with its figures and the CPU use of `watch` (name -> pid),
 * of PostgreSQL and of the whole machine over the run.
 */
export async function runLoad(spec: LoadSpec, watch: Record<string, number> = {}): Promise<RunResult> {
  await quiet()
  return runLoadNow(spec, watch)
}

/**
 * Like runLoad, without waiting for the machine to be idle first: for a load measured while another one runs on
 * purpose (bench/scenarios/password-pressure.ts).
 */
export async function runLoadNow(spec: LoadSpec, watch: Record<string, number> = {}): Promise<RunResult> {
  const dir = await scratch()
  const id = ++files
  const specPath = join(dir, `spec-${id}.json`)
  const outPath = join(dir, `result-${id}.json`)
  await writeFile(specPath, JSON.stringify(spec))
  const before = await cpuSnapshot(watch)
  const child = spawnTracked(process.execPath, ['--import', TSX_IMPORT, join(REPO_ROOT, 'bench', 'lib', 'load-worker.ts'), specPath, outPath], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'inherit', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)))
  const after = await cpuSnapshot(watch)
  if (code !== 0) throw new Error(`load generator failed (exit ${code}):\n${stderr}`)
  const result = JSON.parse(await readFile(outPath, 'utf8')) as LoadResult
  return { ...result, cpu: cpuUse(before, after) }
}

export interface Measurement {
  /** Medians over the measured runs. */
  rps: number
  p50: number
  p99: number
  runs: RunResult[]
  /** Answers that were not 2xx, or connection errors, over every measured run. */
  failures: number
  /** CPU use of the median run (by req/s). */
  cpu: string
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export function summarise(runs: RunResult[]): Measurement {
  const byRate = [...runs].sort((a, b) => a.rps - b.rps)
  const middle = byRate[Math.floor((byRate.length - 1) / 2)]!
  return {
    rps: median(runs.map((run) => run.rps)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    runs,
    failures: runs.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
    cpu: describeCpu(middle.cpu, middle.loadGeneratorCpu),
  }
}

export function describeRun(result: RunResult): string {
  const failures = result.non2xx + result.errors
  const codes = Object.entries(result.statusCodes)
    .map(([code, count]) => `${code}x${count}`)
    .join(' ')
  return (
    `${result.rps.toFixed(1)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms` +
    `${failures ? `, FAILURES ${failures} (${codes}, connection errors ${result.errors})` : ''}\n      ${describeCpu(result.cpu, result.loadGeneratorCpu)}`
  )
}

/** A run during which other processes used more than this share of a core (%) is repeated, at most twice. */
export const NOISY_RUN_PCT = 20
/** Likewise a run during which the hypervisor gave this share of a core (%) to other machines: it slows everything. */
export const STOLEN_RUN_PCT = 15
export const NOISY_RUN_RETRIES = 2

/** Why a run's figures do not describe this machine alone, or null when they do. */
export function noiseIn(cpu: CpuUse, loadGeneratorCpu = 0): string | null {
  const other = otherCpu(cpu, loadGeneratorCpu)
  if (other > NOISY_RUN_PCT) return `${other.toFixed(0)}% of a core went to other processes during the run`
  if (cpu.steal > STOLEN_RUN_PCT) return `the hypervisor took ${cpu.steal.toFixed(0)}% of a core (steal) during the run`
  return null
}

export interface MeasureOptions {
  label: string
  runs?: number
  /** Warm-up seconds; 0 for none. */
  warmup?: number
  /** Called before every run (warm-up included) to produce its spec, e.g. with fresh sessions. */
  spec: () => Promise<LoadSpec> | LoadSpec
  /** Processes whose CPU use is reported (name -> pid). */
  watch?: Record<string, number>
}

/** A discarded warm-up, then `runs` measured runs; medians of req/s, p50 and p99. */
export async function measure(options: MeasureOptions): Promise<Measurement> {
  const [measurement] = await measureAlternating([options])
  return measurement!
}

/**
 * Measures loads that are compared with each other (the same service two ways) in turns: every warm-up, then run 1
 * of each, run 2 of each, and so on. A virtual machine's speed drifts over minutes (a neighbour, the host's clock
 * under sustained load); measured one after the other, the load measured first would take the fast minutes and
 * the ratio would show the drift. Every load gets the first one's number of runs.
 */
export async function measureAlternating(loads: MeasureOptions[]): Promise<Measurement[]> {
  const runs = loads[0]?.runs ?? benchConfig.runs
  for (const options of loads) await warmUp(options)
  const results: RunResult[][] = loads.map(() => [])
  for (let i = 0; i < runs; i++) {
    for (const [index, options] of loads.entries()) results[index]!.push(await measuredRun(options, `run ${i + 1}/${runs}`))
  }
  return results.map(summarise)
}

async function warmUp(options: MeasureOptions): Promise<void> {
  const warmup = options.warmup ?? benchConfig.warmup
  if (warmup <= 0) return
  const { amount: _amount, ...timed } = await options.spec()
  const result = await runLoad({ ...timed, duration: warmup }, options.watch)
  log(`  ${options.label}: warm-up ${describeRun(result)}`)
}

async function measuredRun(options: MeasureOptions, name: string): Promise<RunResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await runLoad(await options.spec(), options.watch)
    log(`  ${options.label}: ${name} ${describeRun(result)}`)
    // Another developer's test suite, or a busy neighbour of this virtual machine, takes cores from everything
    // measured: run it again.
    const noise = noiseIn(result.cpu, result.loadGeneratorCpu)
    if (!noise || attempt > NOISY_RUN_RETRIES) return result
    log(`  ${options.label}: ${noise}; repeating it`)
  }
}

export function log(line: string): void {
  process.stderr.write(`${line}\n`)
}
