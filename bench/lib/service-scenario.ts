import type { Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import type { BaselineTarget } from './baselines.js'
import { benchConfig } from './config.js'
import type { BenchContext } from './context.js'
import { measure, measureAlternating, type LoadSpec, type Measurement } from './load.js'
import { checkRun } from './scenario-helpers.js'
import { seedTenant, type SeededTenant } from './seed.js'
import { startService, type RunningProcess } from './service.js'

/** What a load asks of an instance; where, how many connections and how long come from standardLoad. */
export type Requests = Omit<LoadSpec, 'url' | 'connections' | 'duration'>

/**
 * The standard timed load: benchConfig.connections (or `connections`, for a scenario that measures several counts)
 * for benchConfig.duration seconds against the instance.
 */
export function standardLoad(service: RunningProcess, requests: Requests, connections = benchConfig.connections): LoadSpec {
  return { url: service.url, connections, duration: benchConfig.duration, ...requests }
}

export interface SeededServiceOptions {
  /** Where the instance connects: a bench database, or a pooler in front of one. */
  databaseUrl: string
  /** The owner connection that seeds the tenant's staff. */
  owner: Kysely<DB>
  /** Instance name (process list, CPU profile directory). */
  name: string
  env?: Record<string, string>
  /** Staff accounts of a newly seeded tenant. */
  staff: number
  /** A tenant seeded earlier on the same database, used instead of a new one. */
  tenant?: SeededTenant
  /** The build to run (another commit's); default the working tree's. */
  build?: string
}

/** One service instance with a seeded tenant for `work`, stopped afterwards whatever happens. */
export async function withSeededService<T>(
  ctx: BenchContext,
  options: SeededServiceOptions,
  work: (service: RunningProcess, tenant: SeededTenant) => Promise<T>,
): Promise<{ tenant: SeededTenant; result: T }> {
  const service = await startService({ databaseUrl: options.databaseUrl, jwtSecret: ctx.jwtSecret, name: options.name, env: options.env, build: options.build })
  try {
    const tenant = options.tenant ?? (await seedTenant(service.url, options.owner, options.staff))
    return { tenant, result: await work(service, tenant) }
  } finally {
    await service.stop()
  }
}

export interface HttpScenario {
  /** The measurement's label in the log, and the prefix of the notes about the run. */
  label: string
  /** Instance name (process list, CPU profile directory). */
  name: string
  env?: Record<string, string>
  /** Staff accounts of the seeded tenant. */
  staff: number
  /** Prepares the load once the tenant exists (logins, bodies); returns the spec of each run, warm-up included. */
  load: (service: RunningProcess, tenant: SeededTenant) => Promise<() => LoadSpec | Promise<LoadSpec>>
}

/**
 * One HTTP load measured on a fresh database: the service with production settings, a seeded tenant, the load,
 * then what the service logged. The instance is stopped before the caller asks for baselines, which are
 * measured while no instance runs; the returned target points them at the same database and tenant.
 */
export async function measureOnFreshService(ctx: BenchContext, scenario: HttpScenario): Promise<{ measured: Measurement; baselineTarget: BaselineTarget }> {
  const database = await ctx.database()
  const options = { databaseUrl: database.url, owner: database.owner, name: scenario.name, env: scenario.env, staff: scenario.staff }
  const { tenant, result: measured } = await withSeededService(ctx, options, async (service, tenant) => {
    const measured = await measure({ label: scenario.label, watch: { service: service.pid }, spec: await scenario.load(service, tenant) })
    checkRun(ctx, scenario.label, service, measured)
    return measured
  })
  return { measured, baselineTarget: { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret } }
}

export interface TurnInstance {
  label: string
  service: RunningProcess
  watch: Record<string, number>
  /**
   * What this instance is asked, when it differs from the measurement's common load (a baseline's own path, an
   * instance with sessions of its own); a function is called before every run (fresh refresh chains).
   */
  requests?: Requests | (() => Promise<Requests>)
}

/**
 * The same load against each instance, measured in turns (measureAlternating), so drift favours none; what each
 * instance logged, and any failed answers, become notes prefixed with `scenario`. `connections` defaults to
 * benchConfig.connections.
 */
export async function measureInTurns(
  ctx: BenchContext,
  scenario: string,
  name: string,
  instances: TurnInstance[],
  load?: Requests,
  connections = benchConfig.connections,
): Promise<Measurement[]> {
  const loads = instances.map((instance) => ({
    label: `${name} ${instance.label}`,
    watch: instance.watch,
    spec: async () => {
      const requests = typeof instance.requests === 'function' ? await instance.requests() : (instance.requests ?? load)
      if (!requests) throw new Error(`${name} ${instance.label}: no load to measure`)
      return standardLoad(instance.service, requests, connections)
    },
  }))
  const measured = await measureAlternating(loads)
  for (const [index, instance] of instances.entries()) checkRun(ctx, `${scenario} ${name} ${instance.label}`, instance.service, measured[index])
  return measured
}
