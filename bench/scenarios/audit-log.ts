/**
 * GET /v1/audit-events, pages of 20 for the OWNER of a tenant whose log holds BENCH_AUDIT_EVENTS (1,000,000) events:
 * the first page, the 500th page after the nextCursor of the 499th (reached by following the cursors from the
 * first), and the 500th page by number (page=499: an offset of 9,980). Measured in turns, under the standard load
 * and one request at a time. Target: p50 < 20 ms for each. The notes give what counting the whole log, as every
 * page did before, costs on the same database.
 */
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import { fillAuditLog } from '../lib/audit-fill.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { log, measureAlternating, median, type Measurement } from '../lib/load.js'
import { bearer, checkRun, heading, measuredRow } from '../lib/scenario-helpers.js'
import { login, seedTenant, type SeededTenant } from '../lib/seed.js'
import { startService } from '../lib/service.js'

const SIZE = 20
/** The 500th page, zero-based. */
const DEEP_PAGE = 499

interface AuditPage {
  page: number
  items: unknown[]
  nextCursor: string | null
}

/** The 500th page's path by cursor: the first page's nextCursor, then each page's, as a client walks the log. */
async function deepCursorPath(url: string, access: string): Promise<string> {
  let path = `/v1/audit-events?size=${SIZE}`
  for (let page = 0; page < DEEP_PAGE; page++) {
    const response = await fetch(`${url}${path}`, { headers: bearer(access) })
    const body = (await response.json()) as AuditPage
    if (response.status !== 200 || body.page !== page || body.nextCursor === null) {
      throw new Error(`page ${page} answered ${response.status}: ${JSON.stringify(body).slice(0, 200)}`)
    }
    path = `/v1/audit-events?size=${SIZE}&cursor=${body.nextCursor}`
  }
  return path
}

/** What the page cost before: the tenant's whole log counted, as the runtime role under RLS; median ms of 10. */
async function wholeLogCount(owner: Kysely<DB>, tenant: SeededTenant): Promise<number> {
  return owner.transaction().execute(async (trx) => {
    await sql`set local role svc_app`.execute(trx)
    await sql`select set_config('app.tenant_id', ${String(tenant.tenantId)}, true)`.execute(trx)
    const timings: number[] = []
    for (let i = 0; i < 10; i++) {
      const started = performance.now()
      await sql`select count(*) from audit_events`.execute(trx)
      timings.push(performance.now() - started)
    }
    return median(timings)
  })
}

export async function auditLog(ctx: BenchContext): Promise<void> {
  heading('GET /v1/audit-events')
  const database = await ctx.database()
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-audit-log' })
  const events = benchConfig.auditEvents
  const tenant = await seedTenant(service.url, database.owner, 8)
  const started = performance.now()
  await fillAuditLog(database.owner, tenant, events)
  log(`  filled ${events.toLocaleString('en')} audit events in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const pages = [
    { label: 'first page', path: `/v1/audit-events?size=${SIZE}` },
    { label: "500th page after the 499th page's nextCursor", path: '' },
    { label: `500th page by number (page=${DEEP_PAGE})`, path: `/v1/audit-events?size=${SIZE}&page=${DEEP_PAGE}` },
  ]
  let loaded: Measurement[]
  let single: Measurement[]
  try {
    const { access } = await login(service.url, tenant.customId, tenant.ownerLoginId)
    pages[1]!.path = await deepCursorPath(service.url, access)
    const loads = (connections: number) =>
      pages.map(({ label, path }) => ({
        label: `GET /v1/audit-events, ${label}, ${connections} connection${connections === 1 ? '' : 's'}`,
        watch: { service: service.pid },
        spec: () => ({ url: service.url, method: 'GET' as const, path, connections, duration: benchConfig.duration, headers: bearer(access) }),
      }))
    loaded = await measureAlternating(loads(benchConfig.connections))
    single = await measureAlternating(loads(1))
    loaded.forEach((measured, at) => checkRun(ctx, `GET /v1/audit-events, ${pages[at]!.label}`, service, measured))
  } finally {
    await service.stop()
  }
  const size = `${events.toLocaleString('en')} events`
  pages.forEach(({ label }, at) => {
    const measured = loaded[at]!
    ctx.addRow({
      ...measuredRow(`GET /v1/audit-events (page of ${SIZE}, ${size}), ${label}`, measured),
      target: 'p50 < 20 ms',
      met: measured.p50 < 20 && measured.failures === 0,
      notes: measured.cpu,
    })
    ctx.addRow({
      ...measuredRow(`GET /v1/audit-events (page of ${SIZE}, ${size}), ${label}, 1 connection`, single[at]!),
      target: '(context: latency without queueing)',
      met: null,
    })
  })
  ctx.note(`audit log: counting the tenant's whole log (${size}), as every page did before, took ${(await wholeLogCount(database.owner, tenant)).toFixed(1)} ms (median of 10, svc_app under RLS)`)
}

if (isMain(import.meta.url)) await runStandalone(auditLog)
