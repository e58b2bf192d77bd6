/**
 * POST /v1/refresh: refresh rotates both tokens, so each connection is one session refreshed in a chain: every
 * request carries the refresh cookie of the previous answer. Each run starts from fresh logins (a refresh in flight
 * when a run stops would leave its chain one token behind, which the service rightly treats as reuse).
 *
 * The honest ceiling is a plain hand-written server doing the rotation's own statements (bench/baselines/
 * plain-refresh.ts: @fastify/jwt, a pg Pool, BEGIN / budget read / tenant / GUC / session FOR UPDATE / revoked access
 * token / rotation / budget count / COMMIT, each awaited, then two signs): POST /v1/refresh, one statement, must answer
 * at least as fast (1.0 x). The service and the plain server run side by side on the same database, measured in turns
 * (all warm-ups, then run 1 of each, ...), so a virtual machine's slow minutes fall on both. The plain server's chains
 * start from logins through the service too (the tokens are interchangeable) and then follow its own Set-Cookie.
 * The database ceiling (a GET /v1/me-shaped read, target 0.8 x) stays for context.
 */
import { capacityOf } from '../lib/capacity.js'
import { BASELINE_LABELS, startBaseline, type BaselineFigure } from '../lib/baselines.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { Measurement } from '../lib/load.js'
import { heading, ratioRow } from '../lib/scenario-helpers.js'
import { loginStaff, type SeededTenant } from '../lib/seed.js'
import { measureInTurns, withSeededService, type Requests } from '../lib/service-scenario.js'
import { REFRESH_COOKIE } from '../../lib/sign-in/cookies.js'

const STAFF = 64

const PLAIN = 'plain-refresh.ts'

/** One refresh chain per connection, each from a fresh login. */
export async function refreshChains(serviceUrl: string, tenant: SeededTenant): Promise<Requests> {
  const sessions = await loginStaff(serviceUrl, tenant, benchConfig.connections)
  return { method: 'POST', path: '/v1/refresh', cookieChain: { name: REFRESH_COOKIE, initial: sessions.map((session) => session.refresh) } }
}

/** The plain server measured in turns as the baseline figure of its row. */
function turnFigure(measured: Measurement): BaselineFigure {
  const key = 'plain-refresh'
  return { key, label: BASELINE_LABELS[key], rps: measured.rps, p50: measured.p50, p99: measured.p99, unit: 'req/s', cpu: measured.cpu }
}

export async function refresh(ctx: BenchContext): Promise<void> {
  heading('POST /v1/refresh')
  const database = await ctx.database()
  const options = { databaseUrl: database.url, owner: database.owner, name: 'service-refresh', staff: STAFF }
  const { tenant, result: turns } = await withSeededService(ctx, options, async (service, tenant) => {
    const plain = await startBaseline(PLAIN, database.url, ctx.jwtSecret)
    try {
      // Fresh chains before every run of each side; a login of a user ends that user's earlier session, which by
      // then belongs to a run that has finished.
      const [measured, plainMeasured] = await measureInTurns(ctx, 'refresh', 'POST /v1/refresh', [
        { label: 'service', service, watch: { service: service.pid }, requests: () => refreshChains(service.url, tenant) },
        {
          label: 'plain',
          service: plain,
          watch: { [PLAIN]: plain.pid },
          requests: async () => ({ ...(await refreshChains(service.url, tenant)), path: '/refresh' }),
        },
      ])
      return { service: measured!, plain: plainMeasured! }
    } finally {
      await plain.stop()
    }
  })
  // Measured while no instance runs, at BENCH_CONNECTIONS, and shared with the other scenarios.
  const db = await ctx.baselines.get('db', { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret })
  ctx.addRow(ratioRow('POST /v1/refresh', turns.service, db, 0.8, { notes: turns.service.cpu }))
  ctx.addCapacity(capacityOf('POST /v1/refresh (session rotation)', turns.service, benchConfig.connections))
  ctx.addRow(ratioRow('POST /v1/refresh, in turns', turns.service, turnFigure(turns.plain), 1.0, { notes: `plain: ${turns.plain.cpu}` }))
}

if (isMain(import.meta.url)) await runStandalone(refresh)
