import { readdir, readFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'

/**
 * CPU accounting from /proc, to tell what limits a run: the machine's cores shared by the service, PostgreSQL,
 * the load generator and anything else. Figures are "% of one core" (a 2-core machine tops out at 200).
 */

const CLOCK_TICKS = 100

interface MachineTicks {
  /** user, nice and system time of every process. */
  busy: number
  /** Interrupt handling, mostly loopback networking at high request rates; not attributed to any process. */
  irq: number
  steal: number
  total: number
}

export interface CpuSnapshot {
  at: number
  machine: MachineTicks
  processes: Record<string, number>
  /** Ticks per PostgreSQL process that serves the harness (pid -> ticks). */
  postgres: Map<number, number>
}

async function machineTicks(): Promise<MachineTicks> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number) as number[]
  return {
    busy: user! + nice! + system!,
    irq: irq! + softirq!,
    steal: steal!,
    total: user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal!,
  }
}

async function processTicks(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // utime and stime: fields 14 and 15 of the line, 12 and 13 after the command name.
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/**
 * PostgreSQL processes that work for the harness: the server's own (WAL writer, checkpointer, ...) and backends of
 * svc_bench_* databases. Backends of other developers' databases count as "other".
 */
async function postgresTicks(): Promise<Map<number, number>> {
  const ticks = new Map<number, number>()
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if ((await readFile(`/proc/${entry}/comm`, 'utf8')).trim() !== 'postgres') continue
      const title = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).replaceAll('\0', ' ')
      const backend = /\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(title)
      if (backend && !title.includes(' svc_bench_')) continue
    } catch {
      continue
    }
    ticks.set(Number(entry), await processTicks(Number(entry)))
  }
  return ticks
}

/** Ticks used between two snapshots by the processes of the later one (a process that ended meanwhile is lost). */
function postgresDelta(from: Map<number, number>, to: Map<number, number>): number {
  let sum = 0
  for (const [pid, ticks] of to) sum += ticks - (from.get(pid) ?? 0)
  return sum
}

export async function cpuSnapshot(pids: Record<string, number> = {}): Promise<CpuSnapshot> {
  const processes: Record<string, number> = {}
  for (const [name, pid] of Object.entries(pids)) processes[name] = await processTicks(pid)
  return { at: performance.now(), machine: await machineTicks(), processes, postgres: await postgresTicks() }
}

export interface CpuUse {
  seconds: number
  cores: number
  /** Busy time of all cores (processes and interrupts), % of one core. */
  machine: number
  /** Interrupt time (loopback networking), % of one core. */
  irq: number
  /** Time the hypervisor gave to others, % of one core. */
  steal: number
  postgres: number
  processes: Record<string, number>
}

export function cpuUse(from: CpuSnapshot, to: CpuSnapshot): CpuUse {
  const seconds = (to.at - from.at) / 1000
  const cores = availableParallelism()
  const totalTicks = to.machine.total - from.machine.total || 1
  const share = (ticks: number) => (ticks / CLOCK_TICKS / seconds) * 100
  const processes: Record<string, number> = {}
  for (const name of Object.keys(to.processes)) processes[name] = share(to.processes[name]! - (from.processes[name] ?? 0))
  return {
    seconds,
    cores,
    machine: ((to.machine.busy + to.machine.irq - from.machine.busy - from.machine.irq) / totalTicks) * cores * 100,
    irq: ((to.machine.irq - from.machine.irq) / totalTicks) * cores * 100,
    steal: ((to.machine.steal - from.machine.steal) / totalTicks) * cores * 100,
    postgres: share(postgresDelta(from.postgres, to.postgres)),
    processes,
  }
}

/** Busy time not explained by the watched processes, PostgreSQL or the load generator: other users of the machine. */
export function otherCpu(use: CpuUse, loadGenerator = 0): number {
  const known = Object.values(use.processes).reduce((sum, pct) => sum + pct, 0) + use.postgres + loadGenerator + use.irq
  return Math.max(0, use.machine - known)
}

/** "machine 196/200: service 97, postgres 61, load generator 30, other 8" */
export function describeCpu(use: CpuUse, loadGenerator?: number): string {
  const named = Object.entries(use.processes).map(([name, pct]) => `${name} ${pct.toFixed(0)}`)
  const parts = [...named, `postgres ${use.postgres.toFixed(0)}`]
  if (loadGenerator !== undefined) parts.push(`load generator ${loadGenerator.toFixed(0)}`)
  parts.push(`interrupts ${use.irq.toFixed(0)}`, `other ${otherCpu(use, loadGenerator).toFixed(0)}`)
  const steal = use.steal >= 1 ? `, steal ${use.steal.toFixed(0)}` : ''
  return `CPU % of one core: machine ${use.machine.toFixed(0)}/${use.cores * 100}${steal}; ${parts.join(', ')}`
}

/**
 * Other developers and their test suites share this machine. Before a measured run, waits (up to `maxWaitMs`) for
 * a one-second window in which the machine is mostly idle; returns the busy share of the last window, % of one core.
 */
export async function waitForQuiet(maxWaitMs = 90_000, thresholdPct = 30): Promise<{ busy: number; waitedMs: number }> {
  const started = performance.now()
  for (;;) {
    const from = await cpuSnapshot()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const use = cpuUse(from, await cpuSnapshot())
    const waitedMs = performance.now() - started
    if (use.machine < thresholdPct || waitedMs > maxWaitMs) return { busy: use.machine, waitedMs }
  }
}
