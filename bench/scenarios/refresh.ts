/**
 * POST /v1/refresh: refresh rotates both tokens, so each connection is one session refreshed in a chain: every
 * request carries the refresh cookie of the previous answer. Each run starts from fresh logins (a refresh in flight
 * when a run stops would leave its chain one token behind, which the service rightly treats as reuse).
 * Target: 0.8 x the database ceiling.
 */
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { measure } from '../lib/load.js'
import { checkRun, heading, ratioRow } from '../lib/scenario-helpers.js'
import { loginStaff, seedTenant } from '../lib/seed.js'
import { startService } from '../lib/service.js'
import { REFRESH_COOKIE } from '../../lib/auth/cookies.js'

export async function refresh(ctx: BenchContext): Promise<void> {
  heading('POST /v1/refresh')
  const database = await ctx.database()
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-refresh' })
  const tenant = await seedTenant(service.url, database.owner, 64)
  let measured
  try {
    measured = await measure({
      label: 'POST /v1/refresh',
      watch: { service: service.pid },
      spec: async () => {
        const sessions = await loginStaff(service.url, tenant, benchConfig.connections)
        return {
          url: service.url,
          method: 'POST',
          path: '/v1/refresh',
          connections: benchConfig.connections,
          duration: benchConfig.duration,
          cookieChain: { name: REFRESH_COOKIE, initial: sessions.map((session) => session.refresh) },
        }
      },
    })
    checkRun(ctx, 'POST /v1/refresh', service, measured)
  } finally {
    await service.stop()
  }
  const db = await ctx.baselines.get('db', { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret })
  ctx.addRow(ratioRow('POST /v1/refresh', measured, db, 0.8, { notes: measured.cpu }))
}

if (isMain(import.meta.url)) await runStandalone(refresh)
