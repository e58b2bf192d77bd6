/**
 * What one instance and one database core can serve, per endpoint class: the capacity table of `npm run bench`
 * (docs/operations.md#capacity). From the median run of a scenario's measurement: the requests per second it
 * answered, and the CPU the instance and PostgreSQL used meanwhile. Dividing the one by the other gives what a fully
 * busy core of each would answer at this mix, which is what sizing needs: instances by their cores, the database by
 * its own. On this machine both share two cores with the load generator, so the measured rate is what the slower of
 * the two allowed, and the per-core figures are what each would give on its own.
 */
import type { Measurement, RunResult } from './load.js'
import { fixed } from './report.js'

export interface CapacityRow {
  endpoint: string
  /** Requests per second of the median run, on one instance. */
  rps: number
  /** CPU of the instance and of PostgreSQL during that run, % of one core. */
  instanceCpu: number
  postgresCpu: number
  connections: number
}

/** The median run by rate (the run whose CPU the table reads). */
function medianRun(measured: Measurement): RunResult | undefined {
  const byRate = [...measured.runs].sort((a, b) => a.rps - b.rps)
  return byRate[Math.floor((byRate.length - 1) / 2)]
}

/** The capacity row of `measured`, whose instance was watched under the name `instance`; null without CPU figures. */
export function capacityOf(endpoint: string, measured: Measurement, connections: number, instance = 'service'): CapacityRow | null {
  const run = medianRun(measured)
  const instanceCpu = run?.cpu.processes[instance]
  if (!run || instanceCpu === undefined || instanceCpu <= 0) return null
  return { endpoint, rps: run.rps, instanceCpu, postgresCpu: run.cpu.postgres, connections }
}

/** Requests per second a fully busy core would answer, given `cpu` % of one core for `rps`. */
const perCore = (rps: number, cpu: number) => (cpu > 0 ? (rps * 100) / cpu : Number.NaN)

export const CAPACITY_HEADER = [
  'endpoint class',
  'connections',
  'req/s (one instance)',
  'instance CPU % of a core',
  'req/s per instance core',
  'PostgreSQL CPU % of a core',
  'req/s per database core',
]

export function capacityCells(row: CapacityRow): string[] {
  return [
    row.endpoint,
    String(row.connections),
    fixed(row.rps),
    fixed(row.instanceCpu),
    fixed(perCore(row.rps, row.instanceCpu)),
    fixed(row.postgresCpu),
    fixed(perCore(row.rps, row.postgresCpu)),
  ]
}
