/**
 * Dispatch into the loopback fake provider: PENDING messages due now (100 recipients each, inserted as a committed
 * send leaves them) are claimed and sent by one, then two service instances sharing the database (provider extsms
 * pointed at the fake, SVC_SMS_DISPATCHER=on, production batch size and cron), each message in the group API's
 * calls (create, add, send). recipients/s is measured from the first claim seen to the last message DISPATCHED, by
 * polling the database.
 * Targets: >= 2,000 recipients/s; two instances >= 1.6 x one.
 *
 * Then the same with the fake holding each answer BENCH_PROVIDER_LATENCY_MS (100), as the live provider across the
 * internet does: against the loopback fake one instance already keeps most of this machine busy, so a second one has
 * little to add; with a provider that is the limit, the rows show what a second instance adds. Targets: one instance
 * >= 2,000 recipients/s, two >= 1.8 x one. (The one-call send before the group API, beside this in the same run:
 * bench:compare with BENCH_COMPARE_DISPATCH_INSTANCES and BENCH_COMPARE_DISPATCH_LATENCIES_MS.)
 */
import { stopChild } from '../lib/cleanup.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { BenchDatabase } from '../lib/database.js'
import { dispatcherEnv, dispatchMessagesAt, dispatchOnce, measuredDispatchRun, startFake, type DispatchRun } from '../lib/dispatch-run.js'
import { log, median } from '../lib/load.js'
import { heading } from '../lib/scenario-helpers.js'
import { loggedProblems, startService, summariseProblems, type RunningProcess } from '../lib/service.js'

interface Provider {
  /** How long the fake holds each answer. */
  latencyMs: number
  /** Messages per measured run. */
  messages: number
}

interface InstancesFigure {
  /** Recipients/s, median of the runs. */
  rate: number
  cpu: string
  machine: number
  cores: number
}

async function measureInstances(ctx: BenchContext, database: BenchDatabase, count: number, provider: Provider): Promise<InstancesFigure> {
  const fake = await startFake(provider.latencyMs)
  const instances: RunningProcess[] = []
  try {
    for (let i = 0; i < count; i++) {
      instances.push(
        await startService({
          databaseUrl: database.url,
          jwtSecret: ctx.jwtSecret,
          name: `service-dispatch-${count}x-${i + 1}`,
          env: dispatcherEnv(fake.url),
        }),
      )
    }
    const label = `dispatch, ${count} instance${count > 1 ? 's' : ''}${provider.latencyMs > 0 ? `, provider ${provider.latencyMs} ms` : ''}`
    const warm = await dispatchOnce(database, instances, fake.child, Math.max(10, Math.round(provider.messages / 4)))
    log(`  ${label}: warm-up ${warm.recipientsPerSecond.toFixed(0)} recipients/s (${warm.recipients} in ${warm.seconds.toFixed(2)} s)`)
    const runs: DispatchRun[] = []
    for (let i = 0; i < benchConfig.runs; i++) {
      runs.push(await measuredDispatchRun(`${label}: run ${i + 1}/${benchConfig.runs}`, () => dispatchOnce(database, instances, fake.child, provider.messages)))
    }
    for (const instance of instances) {
      const problems = loggedProblems(instance)
      if (problems.length > 0) ctx.note(`${label}: ${instance.name} logged ${summariseProblems(problems)}`)
    }
    const sorted = [...runs].sort((a, b) => a.recipientsPerSecond - b.recipientsPerSecond)
    const middle = sorted[Math.floor((sorted.length - 1) / 2)]!
    return { rate: median(runs.map((run) => run.recipientsPerSecond)), cpu: middle.cpu, machine: middle.machine, cores: middle.cores }
  } finally {
    for (const instance of instances) await instance.stop()
    await stopChild(fake.child)
  }
}

/**
 * Roughly what a second instance can add on this machine: the fake provider, PostgreSQL and the instances share its
 * cores, so two instances together can fill the cores one instance leaves idle, and little more (a little: some
 * costs per recipient shrink with more work in flight, such as PostgreSQL's group commit). An estimate, not a
 * limit: it tells whether a ratio is held back by the code or by the machine.
 */
function scalingEstimate(one: { machine: number; cores: number }): string {
  const estimate = (one.cores * 100) / one.machine
  return `idle-core estimate for more instances: ${one.cores * 100} / ${one.machine.toFixed(0)} (one instance's machine CPU) = ${estimate.toFixed(2)} x`
}

interface InstanceTargets {
  /** Recipients/s one instance must reach. */
  oneRate: number
  /** The baseline column of the two-instance row. */
  twoBaseline: string
  /** Two instances' rate over one instance's. */
  twoRatio: number
}

/** One, then two instances with the same provider: a row for one alone and a row for two against one. */
async function measureScaling(ctx: BenchContext, database: BenchDatabase, provider: Provider, size: string, targets: InstanceTargets): Promise<void> {
  const one = await measureInstances(ctx, database, 1, provider)
  const two = await measureInstances(ctx, database, 2, provider)
  ctx.addRow({
    scenario: `dispatch, 1 instance (${size})`,
    value: one.rate,
    unit: 'recipients/s',
    target: `>= ${targets.oneRate.toLocaleString('en')} recipients/s`,
    met: one.rate >= targets.oneRate,
    notes: one.cpu,
  })
  const ratio = two.rate / one.rate
  ctx.addRow({
    scenario: `dispatch, 2 instances (${size})`,
    value: two.rate,
    unit: 'recipients/s',
    baseline: targets.twoBaseline,
    baselineValue: one.rate,
    ratio,
    target: `>= ${targets.twoRatio.toFixed(1)} x one instance`,
    met: ratio >= targets.twoRatio,
    notes: `${two.cpu}; ${scalingEstimate(one)}`,
  })
}

export async function dispatch(ctx: BenchContext): Promise<void> {
  heading('dispatch into the loopback fake provider')
  const database = await ctx.database()
  const loopback: Provider = { latencyMs: 0, messages: dispatchMessagesAt(0) }
  const size = `${loopback.messages} msgs x ${benchConfig.dispatchRecipients} recipients`
  await measureScaling(ctx, database, loopback, size, { oneRate: 2000, twoBaseline: 'dispatch, 1 instance', twoRatio: 1.6 })

  const remote: Provider = { latencyMs: benchConfig.providerLatencyMs, messages: dispatchMessagesAt(benchConfig.providerLatencyMs) }
  const remoteSize = `${remote.messages} msgs x ${benchConfig.dispatchRecipients} recipients, provider answers in ${remote.latencyMs} ms`
  // When the provider, not this machine, is the limit, a second instance must nearly double the rate.
  await measureScaling(ctx, database, remote, remoteSize, { oneRate: 2000, twoBaseline: 'dispatch, 1 instance, same provider', twoRatio: 1.8 })
}

if (isMain(import.meta.url)) await runStandalone(dispatch)
