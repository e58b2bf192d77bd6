/**
 * Every knob of the benchmark harness, read once from the environment. Benchmarks print figures; nothing here
 * is a pass/fail threshold for CI.
 */

function number(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw.replaceAll('_', ''))
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (got ${JSON.stringify(raw)})`)
  return value
}

/** Comma-separated whole numbers of at least `min`, e.g. `0,100`. */
function numbers(name: string, fallback: number[], min: number): number[] {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  return raw.split(',').map((part) => {
    const value = Number(part.trim().replaceAll('_', ''))
    if (part.trim() === '' || !Number.isInteger(value) || value < min) {
      throw new Error(`${name} must be whole numbers >= ${min}, comma-separated (got ${JSON.stringify(raw)})`)
    }
    return value
  })
}

export const benchConfig = {
  /** A PostgreSQL server on which the harness may create and drop databases (loopback only). */
  pgUrl: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  /** Seconds per measured load run. */
  duration: number('BENCH_DURATION', 10),
  /** Seconds of discarded warm-up load before the measured runs. */
  warmup: number('BENCH_WARMUP', 3),
  /** Measured runs per scenario; the table shows the median. */
  runs: number('BENCH_RUNS', 3),
  /**
   * The runtime pool of every service instance and baseline server (SVC_DB_POOL_MAX), the same on both sides of a
   * comparison. Reported runs use the service's default, 10; other sizes are for sizing experiments.
   */
  poolMax: number('BENCH_DB_POOL_MAX', 10),
  /** Concurrent HTTP connections of the load generator (the service's pool default is 10). */
  connections: number('BENCH_CONNECTIONS', 10),
  /**
   * The connection counts GET /v1/me is measured at, each in turns with the database ceiling without the
   * revoked-token lookup (bench/scenarios/me.ts): the pool's size, and five times as many clients queueing for it.
   */
  meConnections: numbers('BENCH_ME_CONNECTIONS', [10, 50], 1),
  /** Authenticated requests of the memory scenario. */
  memoryRequests: number('BENCH_MEMORY_REQUESTS', 1_000_000),
  /** Requests per measured run of the 10,000-recipient send (one connection, sequential). */
  sendRequests: number('BENCH_SEND_REQUESTS', 5),
  /** Messages per dispatch run, and recipients per message. */
  dispatchMessages: number('BENCH_DISPATCH_MESSAGES', 1000),
  dispatchRecipients: number('BENCH_DISPATCH_RECIPIENTS', 100),
  /** How long the fake provider holds each answer in the dispatch scenario's second part (milliseconds). */
  providerLatencyMs: number('BENCH_PROVIDER_LATENCY_MS', 100),
  /**
   * The commit comparison's dispatch: instances per side and provider latencies (ms), one row for each pair; the
   * dispatch scenario itself always measures one and two instances, at 0 ms and BENCH_PROVIDER_LATENCY_MS.
   */
  compareDispatchInstances: numbers('BENCH_COMPARE_DISPATCH_INSTANCES', [1], 1),
  compareDispatchLatenciesMs: numbers('BENCH_COMPARE_DISPATCH_LATENCIES_MS', [0], 0),
  /** Second steps (POST /v1/login/mfa) per measured run of the mfa scenario: one user with TOTP and one challenge each. */
  mfaSteps: number('BENCH_MFA_STEPS', 2000),
  /** Messages in the large history tenant. */
  historyMessages: number('BENCH_HISTORY_MESSAGES', 100_000),
  /** Audit events of the one tenant of the audit-log scenario. */
  auditEvents: number('BENCH_AUDIT_EVENTS', 1_000_000),
  /**
   * The scale scenario's database: messages over 13 past months (a tenth of them the large academy's), recipients
   * per message on average, and academies; BENCH_SCALE_MESSAGES=50000 is a dry run at 1/20.
   */
  scaleMessages: number('BENCH_SCALE_MESSAGES', 1_000_000),
  scaleRecipientsPerMessage: number('BENCH_SCALE_RECIPIENTS', 10),
  scaleAcademies: number('BENCH_SCALE_ACADEMIES', 2000),
  /**
   * Experiments only (the reported run uses the server's stock settings): `name=value` pairs, comma-separated,
   * applied with `alter database ... set` to every bench database, e.g. `synchronous_commit=off,commit_delay=200`.
   */
  pgSettings: (process.env.BENCH_PG_SETTINGS ?? '')
    .split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '')
    .map((pair) => {
      const match = /^([a-z_]+)\s*=\s*([A-Za-z0-9_.]+)$/.exec(pair)
      if (!match) throw new Error(`BENCH_PG_SETTINGS: cannot read ${JSON.stringify(pair)} (want name=value)`)
      return { name: match[1]!, value: match[2]! }
    }),
  /**
   * The PgBouncer binary of the pooler scenario (default: pgbouncer on PATH, Debian's 1.18). A release that tracks
   * prepared statements (>= 1.21) runs with `max_prepared_statements` and the service with prepared statements on.
   */
  pgBouncer: process.env.BENCH_PGBOUNCER || undefined,
  /** The commit comparison's base: a git ref; unset, the comparison chooses one and says which (bench/scenarios/compare.ts). */
  baseRef: process.env.BENCH_BASE_REF || undefined,
  /** The commit comparison's head: a git ref; unset, the working tree as it is (uncommitted changes included). */
  headRef: process.env.BENCH_HEAD_REF || undefined,
  /** When set, every service instance runs with `--cpu-prof` and writes its profile into this directory. */
  cpuProfileDir: process.env.BENCH_CPU_PROF_DIR || undefined,
  /** BENCH_PERF_MAP=1: every started process writes /tmp/perf-<pid>.map (`--perf-basic-prof`), for `perf report`. */
  perfMap: process.env.BENCH_PERF_MAP === '1',
}

export type BenchConfig = typeof benchConfig
