/**
 * POST /v1/login: each connection is one staff member logging in again and again through the portal entry
 * (customId), each login replacing that user's previous session. Target: 0.9 x the bcrypt ceiling (bcrypt.compare
 * throughput at cost 10 on the default thread pool); the login-shaped HTTP baseline is shown for context.
 */
import { capacityOf } from '../lib/capacity.js'
import { benchConfig } from '../lib/config.js'
import type { BaselineFigure } from '../lib/baselines.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { Measurement } from '../lib/load.js'
import { heading, infoRow, ratioRow } from '../lib/scenario-helpers.js'
import { PASSWORD, type SeededTenant } from '../lib/seed.js'
import { measureOnFreshService, standardLoad } from '../lib/service-scenario.js'

/** Each connection one staff member logging in through the portal entry, again and again. */
export function loginRequests(tenant: SeededTenant) {
  const bodies = tenant.staff.map((user) => JSON.stringify({ userLoginId: user.loginId, password: PASSWORD, customId: tenant.customId }))
  return { method: 'POST' as const, path: '/v1/login', headers: { 'content-type': 'application/json' }, connectionBodies: bodies }
}

/** The login's target: this share of the bcrypt ceiling (bench/scenarios/mfa.ts measures it too, with factors about). */
export const LOGIN_MINIMUM = 0.9

/** The row of a POST /v1/login load against the bcrypt ceiling, the service's CPU in the notes. */
export function loginCeilingRow(scenario: string, measured: Measurement, bcrypt: BaselineFigure) {
  return ratioRow(scenario, measured, bcrypt, LOGIN_MINIMUM, { notes: measured.cpu })
}

export async function login(ctx: BenchContext): Promise<void> {
  heading('POST /v1/login')
  const { measured, baselineTarget: target } = await measureOnFreshService(ctx, {
    label: 'POST /v1/login',
    name: 'service-login',
    staff: 64,
    load: async (service, tenant) => () => standardLoad(service, loginRequests(tenant)),
  })
  const bcrypt = await ctx.baselines.get('bcrypt', target)
  const loginShaped = await ctx.baselines.get('bcrypt-login', target)
  ctx.addRow(loginCeilingRow('POST /v1/login', measured, bcrypt))
  ctx.addCapacity(capacityOf('POST /v1/login (bcrypt cost 10)', measured, benchConfig.connections))
  ctx.addRow(infoRow('POST /v1/login vs login-shaped HTTP', measured, loginShaped))
}

if (isMain(import.meta.url)) await runStandalone(login)
