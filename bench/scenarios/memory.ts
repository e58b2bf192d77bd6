/**
 * Memory: BENCH_MEMORY_REQUESTS (default 1,000,000) authenticated GET /v1/me requests against one fresh instance.
 * The resident set (VmRSS from /proc/<pid>/status) is read after the first 10,000 requests and at the end, each time
 * after a full garbage collection (see `retained`), and sampled under load in between. Target: the end within 10 %
 * of the figure after 10,000 (no leak).
 */
import { fileURLToPath } from 'node:url'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { describeRun, log, median, runLoad } from '../lib/load.js'
import { checkRun, heading, measuredRow, meRequests } from '../lib/scenario-helpers.js'
import { loginStaff, seedTenant } from '../lib/seed.js'
import { startService, type RunningProcess } from '../lib/service.js'

const FIRST = 10_000
const SAMPLE_MS = 10_000

const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`
const percent = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)} %`
const describeRetained = ({ rssKiB, heapKiB }: Retained) => `RSS ${mib(rssKiB)} (V8 heap ${mib(heapKiB)}) collected`

/** The preload that lets the scenario ask the service for a full garbage collection (bench/lib/collect-on-signal.cjs). */
const COLLECT_ON_SIGNAL = fileURLToPath(new URL('../lib/collect-on-signal.cjs', import.meta.url))

/** What the service keeps after a full garbage collection: resident set and V8 heap in use, in KiB. */
interface Retained {
  rssKiB: number
  heapKiB: number
}

/**
 * The service's retained memory, read the same way at both points of comparison. RSS right after a burst depends on
 * where the garbage collector happens to be: between a busy minute and a quiet one V8 may keep 70 MiB more or
 * less (its memory reducer shrinks an idle heap only after half a minute or more), which made the 10 % comparison a
 * matter of luck. So the service collects its garbage on request (SIGUSR2), then its RSS is read after a short
 * pause as the median of a few samples.
 */
async function retained(service: RunningProcess, report: number): Promise<Retained> {
  process.kill(service.pid, 'SIGUSR2')
  const deadline = Date.now() + 10_000
  let heapKiB: number | null = null
  while (heapKiB === null) {
    if (Date.now() > deadline) throw new Error(`${service.name} did not report its memory after SIGUSR2`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    for (const line of service.log()) {
      if (!line.includes('"benchCollected"')) continue
      const collected = (JSON.parse(line) as { benchCollected: { report: number; heapUsed: number } }).benchCollected
      if (collected.report === report) heapKiB = collected.heapUsed / 1024
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const samples: number[] = []
  for (let i = 0; i < 5; i++) {
    samples.push(await service.rssKiB())
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { rssKiB: median(samples), heapKiB }
}

export async function memory(ctx: BenchContext): Promise<void> {
  const total = Math.max(benchConfig.memoryRequests, FIRST * 2)
  heading(`memory: ${total.toLocaleString('en')} authenticated requests`)
  const database = await ctx.database()
  const service = await startService({
    databaseUrl: database.url,
    jwtSecret: ctx.jwtSecret,
    name: 'service-memory',
    nodeOptions: ['--expose-gc', '--require', COLLECT_ON_SIGNAL],
  })
  try {
    const tenant = await seedTenant(service.url, database.owner, 64)
    const sessions = await loginStaff(service.url, tenant)
    const requests = meRequests(sessions)
    const spec = (amount: number) => ({ url: service.url, connections: benchConfig.connections, amount, ...requests })
    const startRss = await service.rssKiB()
    const first = await runLoad(spec(FIRST), { service: service.pid })
    const afterFirst = await retained(service, 1)
    log(`  memory: first ${FIRST.toLocaleString('en')}: ${describeRun(first)}; RSS ${mib(startRss)} at start, ${describeRetained(afterFirst)} after`)

    const samples: number[] = []
    const sampler = setInterval(() => {
      service.rssKiB().then(
        (kib) => {
          samples.push(kib)
          log(`  memory: RSS ${mib(kib)}`)
        },
        () => undefined,
      )
    }, SAMPLE_MS)
    let rest
    try {
      rest = await runLoad(spec(total - FIRST), { service: service.pid })
    } finally {
      clearInterval(sampler)
    }
    const end = await retained(service, 2)
    log(`  memory: remaining ${(total - FIRST).toLocaleString('en')}: ${describeRun(rest)}; ${describeRetained(end)} at end`)
    checkRun(ctx, 'memory', service)
    const failures = first.non2xx + first.errors + rest.non2xx + rest.errors
    if (failures > 0) ctx.note(`memory: ${failures} failed answers or connection errors (${JSON.stringify(rest.statusCodes)})`)
    const growth = (end.rssKiB - afterFirst.rssKiB) / afterFirst.rssKiB
    const heapGrowth = (end.heapKiB - afterFirst.heapKiB) / afterFirst.heapKiB
    const peak = Math.max(afterFirst.rssKiB, end.rssKiB, ...samples)
    ctx.addRow({
      ...measuredRow(`memory: RSS after ${(total / 1e6).toLocaleString('en')}M GET /v1/me vs after 10k`, rest),
      target: 'RSS within 10 %',
      met: Math.abs(growth) <= 0.1 && failures === 0,
      notes:
        `after a full garbage collection: RSS ${mib(afterFirst.rssKiB)} after 10k, ${mib(end.rssKiB)} at end (${percent(growth)}); ` +
        `V8 heap in use ${mib(afterFirst.heapKiB)} -> ${mib(end.heapKiB)} (${percent(heapGrowth)}); ` +
        `peak sample under load ${mib(peak)}, ${mib(startRss)} idle at start`,
    })
  } finally {
    await service.stop()
  }
}

if (isMain(import.meta.url)) await runStandalone(memory)
