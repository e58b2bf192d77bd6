/**
 * Memory: BENCH_MEMORY_REQUESTS (default 1,000,000) authenticated GET /v1/me requests against one fresh instance.
 * The resident set (VmRSS from /proc/<pid>/status) is read after the first 10,000 requests and at the end, and
 * sampled in between. Target: the end within 10 % of the figure after 10,000 (no leak).
 */
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { describeRun, log, median, runLoad } from '../lib/load.js'
import { checkRun, heading, measuredRow, meRequests } from '../lib/scenario-helpers.js'
import { loginStaff, seedTenant } from '../lib/seed.js'
import { startService, type RunningProcess } from '../lib/service.js'

const FIRST = 10_000
const SAMPLE_MS = 10_000

const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`

/**
 * RSS right after a burst depends on where the garbage collector happens to be. Read it after a short pause, as
 * the median of a few samples, the same way at both points of comparison.
 */
async function settledRss(service: RunningProcess): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 2000))
  const samples: number[] = []
  for (let i = 0; i < 5; i++) {
    samples.push(await service.rssKiB())
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return median(samples)
}

export async function memory(ctx: BenchContext): Promise<void> {
  const total = Math.max(benchConfig.memoryRequests, FIRST * 2)
  heading(`memory: ${total.toLocaleString('en')} authenticated requests`)
  const database = await ctx.database()
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-memory' })
  try {
    const tenant = await seedTenant(service.url, database.owner, 64)
    const sessions = await loginStaff(service.url, tenant)
    const requests = meRequests(sessions)
    const spec = (amount: number) => ({ url: service.url, connections: benchConfig.connections, amount, ...requests })
    const startRss = await service.rssKiB()
    const first = await runLoad(spec(FIRST), { service: service.pid })
    const afterFirst = await settledRss(service)
    log(`  memory: first ${FIRST.toLocaleString('en')}: ${describeRun(first)}; RSS ${mib(startRss)} at start, ${mib(afterFirst)} after`)

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
    const end = await settledRss(service)
    log(`  memory: remaining ${(total - FIRST).toLocaleString('en')}: ${describeRun(rest)}; RSS at end ${mib(end)}`)
    checkRun(ctx, 'memory', service)
    const failures = first.non2xx + first.errors + rest.non2xx + rest.errors
    if (failures > 0) ctx.note(`memory: ${failures} failed answers or connection errors (${JSON.stringify(rest.statusCodes)})`)
    const growth = (end - afterFirst) / afterFirst
    const peak = Math.max(afterFirst, end, ...samples)
    ctx.addRow({
      ...measuredRow(`memory: RSS after ${(total / 1e6).toLocaleString('en')}M GET /v1/me vs after 10k`, rest),
      target: 'RSS within 10 %',
      met: Math.abs(growth) <= 0.1 && failures === 0,
      notes: `RSS ${mib(afterFirst)} after 10k, ${mib(end)} at end (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %), peak sample ${mib(peak)}, ${mib(startRss)} idle at start`,
    })
  } finally {
    await service.stop()
  }
}

if (isMain(import.meta.url)) await runStandalone(memory)
