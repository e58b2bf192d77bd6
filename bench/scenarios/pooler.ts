/**
 * The same service through PgBouncer in transaction mode (SVC_DB_PREPARED_STATEMENTS=false, what such a pooler
 * needs) against a direct connection, in the same run: GET /v1/me and a 10-recipient POST /v1/sms/send.
 * Target: through the pooler >= 0.8 x direct. PgBouncer runs with its defaults but for the pool size, as an operator
 * would run it; the topology suite's `server_check_delay = 0` (a `select 1` before every transaction, so a fault test
 * never meets a dead server connection) is not a production setting and cost this scenario about 8 %.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPgBouncer } from '../../test/topology/pgbouncer.js'
import { onCleanup } from '../lib/cleanup.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { BenchDatabase } from '../lib/database.js'
import { measure, type Measurement } from '../lib/load.js'
import { bearer, checkRun, heading, measuredRow, meRequests } from '../lib/scenario-helpers.js'
import { loginStaff, type SeededTenant } from '../lib/seed.js'
import { standardLoad, withSeededService } from '../lib/service-scenario.js'
import { sendBody } from './send-10k.js'

const STAFF = 64
const SEND_RECIPIENTS = 10

interface Figures {
  me: Measurement
  send: Measurement
}

async function pooledUrl(database: BenchDatabase): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-pgbouncer-'))
  const server = new URL(database.url)
  const bouncer = await startPgBouncer({ dir, server, database: database.name, mode: 'transaction', poolSize: 10 })
  onCleanup('stop pgbouncer', async () => {
    await bouncer.child.stop('SIGINT')
    await rm(dir, { recursive: true, force: true })
  })
  const url = new URL(database.url)
  url.port = String(bouncer.port)
  url.pathname = `/${bouncer.database}`
  return url.toString()
}

async function measureBoth(
  ctx: BenchContext,
  label: string,
  databaseUrl: string,
  owner: BenchDatabase['owner'],
  env: Record<string, string>,
  seeded?: SeededTenant,
): Promise<{ figures: Figures; tenant: SeededTenant }> {
  // API only: the dispatcher's claims would compete with the measured requests.
  const options = { databaseUrl, owner, name: `service-${label}`, env: { ...env, SVC_SMS_DISPATCHER: 'off' }, staff: STAFF, tenant: seeded }
  const { tenant, result: figures } = await withSeededService(ctx, options, async (service, tenant) => {
    const requests = meRequests(await loginStaff(service.url, tenant))
    const me = await measure({ label: `GET /v1/me ${label}`, watch: { service: service.pid }, spec: () => standardLoad(service, requests) })
    const body = sendBody(SEND_RECIPIENTS)
    const send = await measure({
      label: `POST /v1/sms/send ${label}`,
      watch: { service: service.pid },
      spec: () =>
        standardLoad(service, {
          method: 'POST',
          path: '/v1/sms/send',
          headers: { 'content-type': 'application/json' },
          body,
          connectionHeaders: requests.connectionHeaders,
          uniqueHeader: 'idempotency-key',
        }),
    })
    checkRun(ctx, `pooler ${label}`, service, me)
    checkRun(ctx, `pooler ${label} send`, service, send)
    return { me, send }
  })
  return { figures, tenant }
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
  const pooled = await pooledUrl(database)
  const direct = await measureBoth(ctx, 'direct', database.url, database.owner, {})
  const through = await measureBoth(ctx, 'pgbouncer', pooled, database.owner, { SVC_DB_PREPARED_STATEMENTS: 'false' }, direct.tenant)
  ctx.addRow(comparedRow('GET /v1/me through PgBouncer (transaction mode)', through.figures.me, direct.figures.me))
  ctx.addRow(comparedRow(`POST /v1/sms/send, ${SEND_RECIPIENTS} recipients, through PgBouncer`, through.figures.send, direct.figures.send))
}

if (isMain(import.meta.url)) await runStandalone(pooler)
