/**
 * POST /v1/refresh: refresh rotates both tokens, so each connection is one session refreshed in a chain: every
 * request carries the refresh cookie of the previous answer. Each run starts from fresh logins (a refresh in flight
 * when a run stops would leave its chain one token behind, which the service rightly treats as reuse).
 * Target: 0.8 x the database ceiling.
 */
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { heading, ratioRow } from '../lib/scenario-helpers.js'
import { loginStaff, type SeededTenant } from '../lib/seed.js'
import { measureOnFreshService, standardLoad, type Requests } from '../lib/service-scenario.js'
import { REFRESH_COOKIE } from '../../lib/sign-in/cookies.js'

/** One refresh chain per connection, each from a fresh login. */
export async function refreshChains(serviceUrl: string, tenant: SeededTenant): Promise<Requests> {
  const sessions = await loginStaff(serviceUrl, tenant, benchConfig.connections)
  return { method: 'POST', path: '/v1/refresh', cookieChain: { name: REFRESH_COOKIE, initial: sessions.map((session) => session.refresh) } }
}

export async function refresh(ctx: BenchContext): Promise<void> {
  heading('POST /v1/refresh')
  const { measured, baselineTarget } = await measureOnFreshService(ctx, {
    label: 'POST /v1/refresh',
    name: 'service-refresh',
    staff: 64,
    load: async (service, tenant) => async () => standardLoad(service, await refreshChains(service.url, tenant)),
  })
  const db = await ctx.baselines.get('db', baselineTarget)
  ctx.addRow(ratioRow('POST /v1/refresh', measured, db, 0.8, { notes: measured.cpu }))
}

if (isMain(import.meta.url)) await runStandalone(refresh)
