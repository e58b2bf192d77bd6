/**
 * The same service through PgBouncer in transaction mode against a direct connection, in the same run: GET /v1/me
 * and a 10-recipient POST /v1/sms/send, the two instances side by side and measured in turns (run 1 of each, then
 * run 2 of each, ...), so the minutes in which a virtual machine runs faster or slower fall on both. Target: through
 * the pooler >= 0.8 x direct. GET /v1/me's turns also measure a hand-written baseline both ways
 * (bench/baselines/one-exchange-ceiling.ts: the same database work as one exchange, nothing prepared either way), so
 * the results say what PgBouncer itself leaves of a request on this machine beside what it leaves of the service's. PgBouncer runs
 * with its defaults but for the pool size, as an operator would run it; the topology suite's
 * `server_check_delay = 0` (a `select 1` before every transaction, so a fault test never meets a dead server
 * connection) is not a production setting and cost this scenario about 8 %. Debian's PgBouncer (1.18) cannot carry
 * named statements, so the service runs with SVC_DB_PREPARED_STATEMENTS=false behind it; BENCH_PGBOUNCER names a
 * newer build (>= 1.21), which runs with `max_prepared_statements` and the service with prepared statements on.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findPgBouncer, startPgBouncer, type PgBouncerBuild } from '../../test/topology/pgbouncer.js'
import { onCleanup } from '../lib/cleanup.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { BenchDatabase } from '../lib/database.js'
import { startBaseline } from '../lib/baselines.js'
import type { Measurement } from '../lib/load.js'
import { heading, measuredRow, meRequests } from '../lib/scenario-helpers.js'
import { loginStaff } from '../lib/seed.js'
import type { RunningProcess } from '../lib/service.js'
import { measureInTurns, withSeededService, type TurnInstance } from '../lib/service-scenario.js'
import { sendRequests } from './send-10k.js'

const STAFF = 64
const CEILING = 'one-exchange-ceiling.ts'
const SEND_RECIPIENTS = 10

interface Figures {
  me: Measurement
  send: Measurement
  /** The hand-written one-exchange ceiling's GET /me (bench/baselines/one-exchange-ceiling.ts). */
  ceiling: Measurement
}

interface Pooler {
  url: string
  /** PgBouncer's process, watched during the runs so its CPU is reported rather than taken for a neighbour's. */
  pid: number
  build: PgBouncerBuild
}

async function startPooler(database: BenchDatabase): Promise<Pooler> {
  const build = findPgBouncer(benchConfig.pgBouncer)
  if (!build) throw new Error(`no PgBouncer at ${benchConfig.pgBouncer ?? 'PATH'} (apt-get install -y pgbouncer)`)
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-pgbouncer-'))
  const server = new URL(database.url)
  const bouncer = await startPgBouncer({ dir, server, database: database.name, mode: 'transaction', poolSize: 10, build })
  onCleanup('stop pgbouncer', async () => {
    await bouncer.child.stop('SIGINT')
    await rm(dir, { recursive: true, force: true })
  })
  const url = new URL(database.url)
  url.port = String(bouncer.port)
  url.pathname = `/${bouncer.database}`
  return { url: url.toString(), pid: bouncer.child.pid!, build }
}

/**
 * The one-exchange ceiling twice, connected directly and through the pooler, for `work`; stopped afterwards.
 * Measured in the same turns as the service, it tells what PgBouncer itself leaves of a request on this machine.
 */
async function withCeilings<T>(ctx: BenchContext, directUrl: string, pooledUrl: string, work: (direct: RunningProcess, pooled: RunningProcess) => Promise<T>): Promise<T> {
  const direct = await startBaseline(CEILING, directUrl, ctx.jwtSecret)
  try {
    const pooled = await startBaseline(CEILING, pooledUrl, ctx.jwtSecret)
    try {
      return await work(direct, pooled)
    } finally {
      await pooled.stop()
    }
  } finally {
    await direct.stop()
  }
}

/**
 * Both instances run side by side, one connected directly and one through PgBouncer, on the same database and
 * tenant; only the one being measured gets load. API only: the dispatcher's claims would compete with the
 * measured requests.
 */
async function measureBoth(ctx: BenchContext, database: BenchDatabase, pooler: Pooler): Promise<{ direct: Figures; pooled: Figures }> {
  const env = { SVC_SMS_DISPATCHER: 'off' }
  const direct = { databaseUrl: database.url, owner: database.owner, name: 'service-direct', env, staff: STAFF }
  return (
    await withSeededService(ctx, direct, async (directService, tenant) => {
      const pooled = { ...direct, databaseUrl: pooler.url, name: 'service-pgbouncer', env: { ...env, SVC_DB_PREPARED_STATEMENTS: String(pooler.build.preparedStatements) }, tenant }
      return (
        await withSeededService(ctx, pooled, async (pooledService) => {
          // One set of sessions for both: a second login would replace the first one's sessions (one per device
          // category), and both instances accept the same tokens (one database, one signing secret).
          const requests = meRequests(await loginStaff(directService.url, tenant))
          const instances: TurnInstance[] = [
            { label: 'direct', service: directService, watch: { service: directService.pid } },
            { label: 'pgbouncer', service: pooledService, watch: { service: pooledService.pid, pgbouncer: pooler.pid } },
          ]
          // The ceiling takes the same bearer tokens: one database, one signing secret.
          const ceilingRequests = { ...requests, path: '/me' }
          const [directMe, pooledMe, directCeiling, pooledCeiling] = await withCeilings(ctx, database.url, pooler.url, (direct, pooled) =>
            measureInTurns(ctx, 'pooler', 'GET /v1/me', [
              ...instances,
              { label: 'ceiling direct', service: direct, watch: { ceiling: direct.pid }, requests: ceilingRequests },
              { label: 'ceiling pgbouncer', service: pooled, watch: { ceiling: pooled.pid, pgbouncer: pooler.pid }, requests: ceilingRequests },
            ], requests),
          )
          const [directSend, pooledSend] = await measureInTurns(ctx, 'pooler', 'POST /v1/sms/send', instances, sendRequests(requests.connectionHeaders, SEND_RECIPIENTS))
          return {
            direct: { me: directMe!, send: directSend!, ceiling: directCeiling! },
            pooled: { me: pooledMe!, send: pooledSend!, ceiling: pooledCeiling! },
          }
        })
      ).result
    })
  ).result
}

function comparedRow(scenario: string, pooled: Measurement, direct: Measurement) {
  const ratio = pooled.rps / direct.rps
  return {
    ...measuredRow(scenario, pooled),
    baseline: 'the same, direct',
    baselineValue: direct.rps,
    ratio,
    target: '>= 0.8 x direct',
    met: ratio >= 0.8 && pooled.failures === 0,
    notes: pooled.cpu,
  }
}

export async function pooler(ctx: BenchContext): Promise<void> {
  heading('through PgBouncer (transaction mode) vs direct')
  const database = await ctx.database()
  const pooler = await startPooler(database)
  const { direct, pooled } = await measureBoth(ctx, database, pooler)
  // Rows behind a PgBouncer without prepared statements (Debian's) keep the names the committed results have used.
  const { build } = pooler
  const through = build.preparedStatements ? `PgBouncer ${build.release} with prepared statements` : 'PgBouncer'
  ctx.addRow(comparedRow(`GET /v1/me through ${through} (transaction mode)`, pooled.me, direct.me))
  ctx.addRow(comparedRow(`POST /v1/sms/send, ${SEND_RECIPIENTS} recipients, through ${through}`, pooled.send, direct.send))
  ctx.addRow({
    ...comparedRow(`one-exchange ceiling, GET /me through ${through} (hand-written)`, pooled.ceiling, direct.ceiling),
    target: '(context: what the pooler leaves of a request here)',
    met: null,
  })
}

if (isMain(import.meta.url)) await runStandalone(pooler)
