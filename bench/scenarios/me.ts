/**
 * GET /v1/me with a bearer token: each connection is one signed-in staff member (a real login over HTTP) asking
 * for its profile. Compared with the database ceiling (target 0.9 x) and, as the stretch, with the same ceiling
 * without the revoked-token lookup (1.0 x); the JWT ceiling is shown for context.
 */
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { heading, infoRow, meRequests, ratioRow } from '../lib/scenario-helpers.js'
import { loginStaff } from '../lib/seed.js'
import { measureOnFreshService, standardLoad } from '../lib/service-scenario.js'

export const STAFF = 64

export async function me(ctx: BenchContext): Promise<void> {
  heading('GET /v1/me')
  const { measured, baselineTarget: target } = await measureOnFreshService(ctx, {
    label: 'GET /v1/me',
    name: 'service-me',
    staff: STAFF,
    load: async (service, tenant) => {
      const requests = meRequests(await loginStaff(service.url, tenant))
      return () => standardLoad(service, requests)
    },
  })
  const db = await ctx.baselines.get('db', target)
  const dbNoRevocation = await ctx.baselines.get('db-no-revocation', target)
  const jwt = await ctx.baselines.get('jwt', target)
  ctx.addRow(ratioRow('GET /v1/me', measured, db, 0.9, { notes: measured.cpu }))
  ctx.addRow(ratioRow('GET /v1/me (stretch)', measured, dbNoRevocation, 1.0))
  ctx.addRow(infoRow('GET /v1/me vs JWT only', measured, jwt))
}

if (isMain(import.meta.url)) await runStandalone(me)
