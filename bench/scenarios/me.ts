/**
 * GET /v1/me with a bearer token: each connection is one signed-in staff member (a real login over HTTP) asking
 * for its profile. Compared with the database ceiling (target 0.9 x) and, as the stretch, with the same ceiling
 * without the revoked-token lookup (1.0 x); the JWT ceiling is shown for context.
 */
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { measure } from '../lib/load.js'
import { bearer, checkRun, heading, infoRow, ratioRow } from '../lib/scenario-helpers.js'
import { loginStaff, seedTenant } from '../lib/seed.js'
import { startService } from '../lib/service.js'

export const STAFF = 64

export async function me(ctx: BenchContext): Promise<void> {
  heading('GET /v1/me')
  const database = await ctx.database()
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-me' })
  const tenant = await seedTenant(service.url, database.owner, STAFF)
  let measured
  try {
    const sessions = await loginStaff(service.url, tenant)
    measured = await measure({
      label: 'GET /v1/me',
      watch: { service: service.pid },
      spec: () => ({
        url: service.url,
        method: 'GET',
        path: '/v1/me',
        connections: benchConfig.connections,
        duration: benchConfig.duration,
        connectionHeaders: sessions.map((session) => bearer(session.access)),
      }),
    })
    checkRun(ctx, 'GET /v1/me', service, measured)
  } finally {
    await service.stop()
  }
  const target = { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret }
  const db = await ctx.baselines.get('db', target)
  const dbNoRevocation = await ctx.baselines.get('db-no-revocation', target)
  const jwt = await ctx.baselines.get('jwt', target)
  ctx.addRow(ratioRow('GET /v1/me', measured, db, 0.9, { notes: measured.cpu }))
  ctx.addRow(ratioRow('GET /v1/me (stretch)', measured, dbNoRevocation, 1.0))
  ctx.addRow(infoRow('GET /v1/me vs JWT only', measured, jwt))
}

if (isMain(import.meta.url)) await runStandalone(me)
