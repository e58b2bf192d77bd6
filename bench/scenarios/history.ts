/**
 * GET /v1/sms/history, first page of 20 (default sort createdAt,desc), for a manager of a tenant with 100,000
 * messages. Targets: p50 < 20 ms and 0.5 x the database ceiling under the standard load; a one-connection run
 * shows the latency without queueing.
 */
import { capacityOf } from '../lib/capacity.js'
import { sql } from 'kysely'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { log, measure } from '../lib/load.js'
import { bearer, checkRun, heading, ratioRow } from '../lib/scenario-helpers.js'
import { fillHistory, loginStaff, seedTenant } from '../lib/seed.js'
import { startService } from '../lib/service.js'

export const HISTORY_PATH = '/v1/sms/history?page=0&size=20'

export async function history(ctx: BenchContext): Promise<void> {
  heading('GET /v1/sms/history')
  const database = await ctx.database()
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-history' })
  const tenant = await seedTenant(service.url, database.owner, 8)
  const started = performance.now()
  await fillHistory(database.owner, tenant.tenantId, tenant.ownerId, tenant.staff[0]!.id, benchConfig.historyMessages)
  // Autovacuum would have analysed a table this size long before anyone pages through it.
  await sql`vacuum analyze sms_messages`.execute(database.owner)
  log(`  filled ${benchConfig.historyMessages.toLocaleString('en')} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  let loaded
  let single
  try {
    const sessions = await loginStaff(service.url, tenant, 4)
    const spec = (connections: number) => () => ({
      url: service.url,
      method: 'GET' as const,
      path: HISTORY_PATH,
      connections,
      duration: benchConfig.duration,
      connectionHeaders: sessions.map((session) => bearer(session.access)),
    })
    loaded = await measure({ label: 'GET /v1/sms/history', watch: { service: service.pid }, spec: spec(benchConfig.connections) })
    single = await measure({ label: 'GET /v1/sms/history, 1 connection', watch: { service: service.pid }, spec: spec(1) })
    checkRun(ctx, 'GET /v1/sms/history', service, loaded)
  } finally {
    await service.stop()
  }
  const db = await ctx.baselines.get('db', { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret })
  const label = `GET /v1/sms/history (page of 20, ${benchConfig.historyMessages.toLocaleString('en')} msgs)`
  const fast = loaded.p50 < 20
  ctx.addRow({
    ...ratioRow(label, loaded, db, 0.5, { targetSuffix: ', p50 < 20 ms', alsoRequire: fast, notes: loaded.cpu }),
  })
  ctx.addCapacity(capacityOf('GET /v1/sms/history (a page of 20)', loaded, benchConfig.connections))
  ctx.addRow({
    scenario: `${label}, 1 connection`,
    value: single.rps,
    unit: 'req/s',
    p50: single.p50,
    p99: single.p99,
    target: '(context: latency without queueing)',
    met: null,
  })
}

if (isMain(import.meta.url)) await runStandalone(history)
