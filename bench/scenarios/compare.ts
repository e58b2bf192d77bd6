/**
 * Two commits of the service in the same run, measured in turns: `base` (BENCH_BASE_REF) and `head` (BENCH_HEAD_REF,
 * default the working tree as it is, uncommitted changes included). A ref is built in a git worktree of its own
 * (bench/lib/ref-build.ts), the working tree as every scenario builds it. For each load a base and a head instance
 * run side by side, each on a fresh database of its own that it migrates at start with its own code (a head with
 * new migrations runs on its own schema), seeded alike; only the one being measured gets load, both warm-ups come
 * first, then run 1 of each, run 2 of each, ..., so a virtual machine's slow minutes fall on both.
 *
 * Loads: GET /v1/me, POST /v1/login (portal entry, bcrypt cost 10), POST /v1/refresh chains, POST /v1/sms/send with 10 recipients (API-only instances), and
 * dispatch into the loopback fake provider (recipients/s; one row per instance count and provider latency of
 * BENCH_COMPARE_DISPATCH_INSTANCES and BENCH_COMPARE_DISPATCH_LATENCIES_MS, default one instance per side at 0 ms).
 * Prints base and head medians, head/base and every run's pair; writes nothing (an on-demand comparison, not part of
 * `npm run bench`).
 *   npm run bench:compare [-- me login refresh send dispatch]
 */
import type { ChildProcess } from 'node:child_process'
import { main, stopChild } from '../lib/cleanup.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain } from '../lib/context.js'
import { createBenchDatabase } from '../lib/database.js'
import {
  dispatcherEnv,
  dispatchMessagesAt,
  dispatchOnce,
  FAKE_PROVIDER_SCRIPT,
  measuredDispatchRun,
  startFake,
  type DispatchRun,
} from '../lib/dispatch-run.js'
import { startBaseline } from '../lib/baselines.js'
import { log, median, noiseIn, NOISY_RUN_RETRIES, type Measurement, type RunResult } from '../lib/load.js'
import { commitSubject, refBuild, refProviderFake, resolveCommit } from '../lib/ref-build.js'
import { fixed, textTable } from '../lib/report.js'
import { bearer, heading, meRequests } from '../lib/scenario-helpers.js'
import { loginStaff, type SeededTenant } from '../lib/seed.js'
import { loggedProblems, serviceBuild, startService, summariseProblems, uncommittedServiceFiles, type RunningProcess } from '../lib/service.js'
import { measureInTurns, withSeededService, type TurnInstance } from '../lib/service-scenario.js'
import { loginRequests } from './login.js'
import { STAFF } from './me.js'
import { refreshChains } from './refresh.js'
import { sendRequests } from './send-10k.js'

const SEND_RECIPIENTS = 10

export interface Side {
  label: 'base' | 'head'
  /** What was built, for the printout: ref, commit and subject, or the working tree. */
  describe: string
  /** The build snapshot the side's instances run. */
  build: string
}

interface DispatchSide extends Side {
  /** The side's own fake provider (fake-provider.ts), which speaks the protocol of the side's adapter. */
  fake: string
}

export interface HttpLoad {
  key: string
  name: string
  env?: Record<string, string>
  /** Prepared once the instance's tenant exists: its own sessions, on its own database. */
  requests: (service: RunningProcess, tenant: SeededTenant) => Promise<NonNullable<TurnInstance['requests']>>
  /**
   * A hand-written baseline (a file of bench/baselines/) measured in the same turns on the head's database with the
   * head's requests at `path`, so head/ceiling reads beside head/base.
   */
  ceiling?: { label: string; script: string; path: string }
}

export const HTTP_LOADS: HttpLoad[] = [
  {
    key: 'me',
    name: 'GET /v1/me',
    requests: async (service, tenant) => meRequests(await loginStaff(service.url, tenant)),
    ceiling: { label: 'plain', script: 'plain-rls.ts', path: '/item' },
  },
  { key: 'login', name: 'POST /v1/login', requests: async (_service, tenant) => loginRequests(tenant) },
  // Fresh logins before every run: a chain a stopped run left one token behind would be refused as reuse.
  { key: 'refresh', name: 'POST /v1/refresh', requests: async (service, tenant) => () => refreshChains(service.url, tenant) },
  {
    key: 'send',
    name: `POST /v1/sms/send, ${SEND_RECIPIENTS} recipients`,
    // The dispatcher's claims would compete with the measured requests.
    env: { SVC_SMS_DISPATCHER: 'off' },
    requests: async (service, tenant) => {
      const sessions = await loginStaff(service.url, tenant)
      return sendRequests(sessions.map((session) => bearer(session.access)), SEND_RECIPIENTS)
    },
  },
]

const LOAD_KEYS = [...HTTP_LOADS.map((load) => load.key), 'dispatch']

/** One measured run's figure; `noisy` when other work disturbed it even after the repeats. */
interface RunFigure {
  value: number
  noisy: boolean
}

export interface ComparedRow {
  load: string
  unit: string
  base: number
  head: number
  /** Each measured run's figure, base and head, in the order they ran. */
  pairs: [RunFigure, RunFigure][]
  p50?: [number, number]
  /** The load's ceiling, measured in the same turns (HttpLoad.ceiling). */
  ceiling?: { label: string; rps: number; p50: number; runs: RunFigure[] }
}

interface Choice {
  ref: string
  commit: string
  why: string
}

/**
 * Unset, the base is the first of: origin/main; HEAD when the head is the working tree with uncommitted service
 * changes; the head's parent. A candidate that is the head's own commit with nothing uncommitted is skipped, since
 * comparing a build with itself only measures the noise (which BENCH_BASE_REF=<the head> does on purpose).
 */
async function chooseBase(head: Choice, dirty: boolean): Promise<Choice> {
  if (benchConfig.baseRef) {
    const commit = await resolveCommit(benchConfig.baseRef)
    if (!commit) throw new Error(`BENCH_BASE_REF=${benchConfig.baseRef} names no commit`)
    return { ref: benchConfig.baseRef, commit, why: 'BENCH_BASE_REF' }
  }
  const candidates = [
    { ref: 'origin/main', why: 'the main line' },
    ...(dirty ? [{ ref: 'HEAD', why: 'the commit under the uncommitted changes' }] : []),
    { ref: `${head.ref}~1`, why: "the head's parent" },
  ]
  for (const candidate of candidates) {
    const commit = await resolveCommit(candidate.ref)
    if (commit && (commit !== head.commit || dirty)) return { ...candidate, commit, why: `default: ${candidate.why}` }
  }
  throw new Error('no base to compare with: set BENCH_BASE_REF')
}

async function chooseSides(): Promise<[DispatchSide, DispatchSide]> {
  const headRef = benchConfig.headRef ?? 'HEAD'
  const headCommit = await resolveCommit(headRef)
  if (!headCommit) throw new Error(`BENCH_HEAD_REF=${headRef} names no commit`)
  const uncommitted = benchConfig.headRef ? [] : await uncommittedServiceFiles()
  const head = { ref: headRef, commit: headCommit, why: benchConfig.headRef ? 'BENCH_HEAD_REF' : 'default: the working tree' }
  const base = await chooseBase(head, uncommitted.length > 0)
  const describe = async (choice: Choice) => `${choice.ref} = ${await commitSubject(choice.commit)} (${choice.why})`
  const headDescription = benchConfig.headRef
    ? await describe(head)
    : `the working tree at ${await commitSubject(headCommit)}` +
      (uncommitted.length > 0 ? `, with uncommitted changes in ${uncommitted.length} service files` : ', no uncommitted service changes')
  const baseDescription = await describe(base)
  log(`base: ${baseDescription}\nhead: ${headDescription}`)
  const headBuild = benchConfig.headRef ? await refBuild(headCommit) : await serviceBuild()
  const baseBuild = await refBuild(base.commit)
  const headFake = benchConfig.headRef ? await refProviderFake(headCommit) : FAKE_PROVIDER_SCRIPT
  return [
    { label: 'base', describe: baseDescription, build: baseBuild, fake: await refProviderFake(base.commit) },
    { label: 'head', describe: headDescription, build: headBuild, fake: headFake },
  ]
}

/**
 * One side's instance of an HTTP load on a fresh database it migrates itself, with a seeded tenant, for `work`; with
 * `withCeiling`, also the load's ceiling on that database, asked the instance's requests at its own path.
 */
async function withSideInstance<T>(
  ctx: BenchContext,
  side: Side,
  load: HttpLoad,
  withCeiling: boolean,
  work: (instances: TurnInstance[]) => Promise<T>,
): Promise<T> {
  const database = await createBenchDatabase({ migrate: false })
  const options = { databaseUrl: database.url, owner: database.owner, name: `compare-${load.key}-${side.label}`, env: load.env, staff: STAFF, build: side.build }
  const { result } = await withSeededService(ctx, options, async (service, tenant) => {
    const requests = await load.requests(service, tenant)
    const instance: TurnInstance = { label: side.label, service, watch: { service: service.pid }, requests }
    if (!withCeiling || !load.ceiling || typeof requests === 'function') return work([instance])
    const ceiling = await startBaseline(load.ceiling.script, database.url, ctx.jwtSecret)
    try {
      const watch = { [load.ceiling.script]: ceiling.pid }
      return await work([instance, { label: load.ceiling.label, service: ceiling, watch, requests: { ...requests, path: load.ceiling.path } }])
    } finally {
      await ceiling.stop()
    }
  })
  return result
}

const httpRun = (run: RunResult): RunFigure => ({ value: run.rps, noisy: noiseIn(run.cpu, run.loadGeneratorCpu) !== null })

function comparedHttp(name: string, base: Measurement, head: Measurement, ceiling?: { label: string; measured: Measurement }): ComparedRow {
  return {
    load: name,
    unit: 'req/s',
    base: base.rps,
    head: head.rps,
    pairs: base.runs.map((run, i) => [httpRun(run), httpRun(head.runs[i]!)]),
    p50: [base.p50, head.p50],
    ...(ceiling && { ceiling: { label: ceiling.label, rps: ceiling.measured.rps, p50: ceiling.measured.p50, runs: ceiling.measured.runs.map(httpRun) } }),
  }
}

export async function compareHttp(ctx: BenchContext, [base, head]: [Side, Side], load: HttpLoad): Promise<ComparedRow> {
  heading(`compare: ${load.name}`)
  const [baseFigure, headFigure, ceilingFigure] = await withSideInstance(ctx, base, load, false, (baseInstances) =>
    withSideInstance(ctx, head, load, true, (headInstances) => measureInTurns(ctx, 'compare', load.name, [...baseInstances, ...headInstances])),
  )
  const ceiling = load.ceiling && ceilingFigure ? { label: load.ceiling.label, measured: ceilingFigure } : undefined
  return comparedHttp(load.name, baseFigure!, headFigure!, ceiling)
}

/** One row of the dispatch comparison: instances per side, and how long the fake holds each answer. */
interface DispatchCase {
  instances: number
  latencyMs: number
}

/**
 * Dispatch, `instances` per side on a database of its own, each side through its own fake provider (its commit's,
 * holding each answer `latencyMs`): both warm-ups, then base, head, base, head, ... Only the measured side has due
 * messages; the other's schedulers find none.
 */
async function compareDispatch(ctx: BenchContext, sides: [DispatchSide, DispatchSide], { instances, latencyMs }: DispatchCase): Promise<ComparedRow> {
  const messages = dispatchMessagesAt(latencyMs)
  const load =
    `dispatch, ${instances} instance${instances > 1 ? 's' : ''}, provider ${latencyMs} ms, ` +
    `${messages} msgs x ${benchConfig.dispatchRecipients} recipients`
  heading(`compare: ${load}`)
  const running: { side: Side; fake: ChildProcess; services: RunningProcess[]; runs: DispatchRun[]; once: (messages: number) => Promise<DispatchRun> }[] = []
  try {
    for (const side of sides) {
      const database = await createBenchDatabase({ migrate: false })
      const fake = await startFake(latencyMs, side.fake)
      const services: RunningProcess[] = []
      running.push({ side, fake: fake.child, services, runs: [], once: (count) => dispatchOnce(database, services, fake.child, count) })
      for (let i = 0; i < instances; i++) {
        const name = `compare-dispatch-${side.label}-${instances}x-${i + 1}`
        // The first instance migrates the side's database; the others start on it once it is ready.
        services.push(await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name, env: dispatcherEnv(fake.url), build: side.build }))
      }
    }
    for (const { side, once } of running) {
      const warm = await once(Math.max(10, Math.round(messages / 4)))
      log(`  ${load} ${side.label}: warm-up ${warm.recipientsPerSecond.toFixed(0)} recipients/s (${warm.recipients} in ${warm.seconds.toFixed(2)} s)`)
    }
    for (let i = 0; i < benchConfig.runs; i++) {
      for (const { side, runs, once } of running) {
        runs.push(await measuredDispatchRun(`${load} ${side.label}: run ${i + 1}/${benchConfig.runs}`, () => once(messages)))
      }
    }
    for (const { side, services } of running) {
      for (const service of services) {
        const problems = loggedProblems(service)
        if (problems.length > 0) ctx.note(`compare ${load} ${side.label}: ${service.name} logged ${summariseProblems(problems)}`)
      }
    }
    const [base, head] = running.map(({ runs }) => runs.map((run) => ({ value: run.recipientsPerSecond, noisy: run.noise !== null }))) as [RunFigure[], RunFigure[]]
    const medianOf = (runs: RunFigure[]) => median(runs.map((run) => run.value))
    return { load, unit: 'recipients/s', base: medianOf(base), head: medianOf(head), pairs: base.map((run, i) => [run, head[i]!]) }
  } finally {
    for (const { services, fake } of running) {
      for (const service of services) await service.stop()
      await stopChild(fake)
    }
  }
}

const rate = (value: number) => fixed(value, value < 100 ? 1 : 0)
const runCell = (run: RunFigure) => `${rate(run.value)}${run.noisy ? '*' : ''}`

/** The ceiling measured in the same turns as a row's base and head: its median, both ratios and its runs. */
function ceilingLine(row: ComparedRow, ceiling: NonNullable<ComparedRow['ceiling']>): string {
  return (
    `${row.load}: ${ceiling.label} ceiling in the same turns ${rate(ceiling.rps)} ${row.unit}, p50 ${fixed(ceiling.p50, 2)} ms; ` +
    `base/ceiling ${(row.base / ceiling.rps).toFixed(2)} x, head/ceiling ${(row.head / ceiling.rps).toFixed(2)} x ` +
    `(runs ${ceiling.runs.map((run, i) => `${i + 1}: ${runCell(run)}`).join('; ')})`
  )
}

function printComparison(sides: [Side, Side], rows: ComparedRow[], notes: string[]): void {
  const header = ['load', 'base median', 'head median', 'head/base', 'runs in turns (base / head)', 'p50 ms (base / head)']
  const cells = rows.map((row) => [
    row.load,
    `${rate(row.base)} ${row.unit}`,
    `${rate(row.head)} ${row.unit}`,
    `${(row.head / row.base).toFixed(2)} x`,
    row.pairs.map(([base, head], i) => `${i + 1}: ${runCell(base)} / ${runCell(head)}`).join('; '),
    row.p50 ? `${fixed(row.p50[0], 2)} / ${fixed(row.p50[1], 2)}` : '-',
  ])
  console.log(
    [
      '',
      ...sides.map((side) => `${side.label}: ${side.describe}`),
      `${benchConfig.connections} connections, ${benchConfig.warmup} s warm-up, ${benchConfig.runs} runs of ${benchConfig.duration} s each in turns`,
      '',
      textTable(header, cells),
      '',
      ...rows.flatMap((row) => (row.ceiling ? [ceilingLine(row, row.ceiling)] : [])),
      ...(rows.some((row) => row.pairs.flat().some((run) => run.noisy))
        ? [`* other work took cores during that run, still after ${NOISY_RUN_RETRIES} repeats: read its pair as noise`, '']
        : []),
      ...notes.map((note) => `note: ${note}`),
      '',
    ].join('\n'),
  )
}

/** The loads named in `only` (all when empty), printed; `npm run bench:compare -- me dispatch`. */
export async function compare(ctx: BenchContext, only: string[] = []): Promise<void> {
  const unknown = only.filter((key) => !LOAD_KEYS.includes(key))
  if (unknown.length > 0) throw new Error(`unknown loads ${unknown.join(', ')} (known: ${LOAD_KEYS.join(', ')})`)
  const wanted = (key: string) => only.length === 0 || only.includes(key)
  const sides = await chooseSides()
  const rows: ComparedRow[] = []
  for (const load of HTTP_LOADS) if (wanted(load.key)) rows.push(await compareHttp(ctx, sides, load))
  if (wanted('dispatch')) {
    for (const latencyMs of benchConfig.compareDispatchLatenciesMs) {
      for (const instances of benchConfig.compareDispatchInstances) rows.push(await compareDispatch(ctx, sides, { instances, latencyMs }))
    }
  }
  printComparison(sides, rows, ctx.notes)
}

if (isMain(import.meta.url)) await main(() => compare(new BenchContext(), process.argv.slice(2)))
