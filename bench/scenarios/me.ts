/**
 * GET /v1/me with a bearer token: each connection is one signed-in staff member (a real login over HTTP) asking
 * for its profile. The honest ceiling is a plain hand-written server doing less (bench/baselines/plain-rls.ts:
 * @fastify/jwt, a pg Pool, BEGIN / tenant GUC / a primary-key read under forced RLS / COMMIT, each awaited): GET
 * /v1/me must answer at least as fast (1.0 x) and 1.2 x the same server with the revoked-token lookup added, which
 * GET /v1/me also does. The database ceiling (target 0.9 x) and the JWT ceiling stay for context.
 *
 * Measured at every count of BENCH_ME_CONNECTIONS (10 and 50): the service and the plain server run side by side on
 * the same database and tokens, in turns (all warm-ups, then run 1 of each, ...), so a virtual machine's slow
 * minutes fall on all of them. At 50 connections five clients queue for each pooled connection, which is where a
 * cost per request that 10 connections hide in waiting shows.
 */
import { capacityOf } from '../lib/capacity.js'
import { BASELINE_LABELS, startBaseline, type BaselineFigure } from '../lib/baselines.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { Measurement } from '../lib/load.js'
import { heading, infoRow, meRequests, ratioRow } from '../lib/scenario-helpers.js'
import { loginStaff } from '../lib/seed.js'
import { measureInTurns, withSeededService } from '../lib/service-scenario.js'

export const STAFF = 64

const PLAIN = 'plain-rls.ts'

interface Turns {
  connections: number
  service: Measurement
  plain: Measurement
  plainRevocation: Measurement
}

/** A plain server measured in turns as a baseline figure of its row. */
function turnFigure(key: 'plain' | 'plain-revocation', measured: Measurement): BaselineFigure {
  return { key, label: BASELINE_LABELS[key], rps: measured.rps, p50: measured.p50, p99: measured.p99, unit: 'req/s', cpu: measured.cpu }
}

export async function me(ctx: BenchContext): Promise<void> {
  heading('GET /v1/me')
  const database = await ctx.database()
  const options = { databaseUrl: database.url, owner: database.owner, name: 'service-me', staff: STAFF }
  const { tenant, result: turns } = await withSeededService(ctx, options, async (service, tenant) => {
    const requests = meRequests(await loginStaff(service.url, tenant))
    const plain = await startBaseline(PLAIN, database.url, ctx.jwtSecret)
    try {
      const measured: Turns[] = []
      for (const connections of benchConfig.meConnections) {
        // The plain server takes the service's own tokens: one database, one signing secret.
        const [me, item, itemWithRevocation] = await measureInTurns(
          ctx,
          'me',
          `GET /v1/me, ${connections} connections`,
          [
            { label: 'service', service, watch: { service: service.pid } },
            { label: 'plain', service: plain, watch: { [PLAIN]: plain.pid }, requests: { ...requests, path: '/item' } },
            { label: 'plain-revocation', service: plain, watch: { [PLAIN]: plain.pid }, requests: { ...requests, path: '/item-with-revocation' } },
          ],
          requests,
          connections,
        )
        measured.push({ connections, service: me!, plain: item!, plainRevocation: itemWithRevocation! })
      }
      return measured
    } finally {
      await plain.stop()
    }
  })
  // Measured while no instance runs, at BENCH_CONNECTIONS, and shared with the other scenarios.
  const target = { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret }
  const db = await ctx.baselines.get('db', target)
  const jwt = await ctx.baselines.get('jwt', target)
  const standard = turns.find((turn) => turn.connections === benchConfig.connections) ?? turns[0]!
  ctx.addRow(ratioRow('GET /v1/me', standard.service, db, 0.9, { notes: standard.service.cpu }))
  for (const turn of turns) {
    const name = `GET /v1/me, ${turn.connections} connections, in turns`
    ctx.addRow(ratioRow(name, turn.service, turnFigure('plain', turn.plain), 1.0, { notes: `plain: ${turn.plain.cpu}` }))
    ctx.addRow(
      ratioRow(name, turn.service, turnFigure('plain-revocation', turn.plainRevocation), 1.2, {
        notes: `plain with revocation: ${turn.plainRevocation.cpu}`,
      }),
    )
  }
  ctx.addRow(infoRow('GET /v1/me vs JWT only', standard.service, jwt))
  for (const turn of turns) ctx.addCapacity(capacityOf('GET /v1/me (authenticated read)', turn.service, turn.connections))
}

if (isMain(import.meta.url)) await runStandalone(me)
