/**
 * POST /v1/login: each connection is one staff member logging in again and again through the portal entry
 * (customId), each login replacing that user's previous session. Target: 0.9 x the bcrypt ceiling (bcrypt.compare
 * throughput at cost 10 on the default thread pool); the login-shaped HTTP baseline is shown for context.
 */
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { measure } from '../lib/load.js'
import { checkRun, heading, infoRow, ratioRow } from '../lib/scenario-helpers.js'
import { PASSWORD, seedTenant } from '../lib/seed.js'
import { startService } from '../lib/service.js'

export async function login(ctx: BenchContext): Promise<void> {
  heading('POST /v1/login')
  const database = await ctx.database()
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-login' })
  const tenant = await seedTenant(service.url, database.owner, 64)
  let measured
  try {
    const bodies = tenant.staff.map((user) => JSON.stringify({ userLoginId: user.loginId, password: PASSWORD, customId: tenant.customId }))
    measured = await measure({
      label: 'POST /v1/login',
      watch: { service: service.pid },
      spec: () => ({
        url: service.url,
        method: 'POST',
        path: '/v1/login',
        connections: benchConfig.connections,
        duration: benchConfig.duration,
        headers: { 'content-type': 'application/json' },
        connectionBodies: bodies,
      }),
    })
    checkRun(ctx, 'POST /v1/login', service, measured)
  } finally {
    await service.stop()
  }
  const target = { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret }
  const bcrypt = await ctx.baselines.get('bcrypt', target)
  const loginShaped = await ctx.baselines.get('bcrypt-login', target)
  ctx.addRow(ratioRow('POST /v1/login', measured, bcrypt, 0.9, { notes: measured.cpu }))
  ctx.addRow(infoRow('POST /v1/login vs login-shaped HTTP', measured, loginShaped))
}

if (isMain(import.meta.url)) await runStandalone(login)
