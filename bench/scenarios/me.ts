/**
 * GET /v1/me with a bearer token: each connection is one signed-in staff member (a real login over HTTP) asking
 * for its profile. Compared with the database ceiling (target 0.9 x) and, as the stretch, with the same ceiling
 * without the revoked-token lookup (1.0 x); the JWT ceiling is shown for context.
 *
 * The stretch is measured at every count of BENCH_ME_CONNECTIONS (10 and 50): the service and the ceiling run side
 * by side on the same database and tokens, measured in turns (both warm-ups, then run 1 of each, ...), so a virtual
 * machine's slow minutes fall on both. At 50 connections five clients queue for each pooled connection, which is
 * where a cost per request that 10 connections hide in waiting shows.
 */
import { BASELINE_LABELS, startBaseline, type BaselineFigure } from '../lib/baselines.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { Measurement } from '../lib/load.js'
import { heading, infoRow, meRequests, ratioRow } from '../lib/scenario-helpers.js'
import { loginStaff } from '../lib/seed.js'
import { measureInTurns, withSeededService } from '../lib/service-scenario.js'

export const STAFF = 64

const CEILING = 'db-ceiling.ts'

interface Turns {
  connections: number
  service: Measurement
  ceiling: Measurement
}

/** The in-turns ceiling as a baseline figure of its row. */
function ceilingFigure(measured: Measurement): BaselineFigure {
  const key = 'db-no-revocation'
  return { key, label: BASELINE_LABELS[key], rps: measured.rps, p50: measured.p50, p99: measured.p99, unit: 'req/s', cpu: measured.cpu }
}

export async function me(ctx: BenchContext): Promise<void> {
  heading('GET /v1/me')
  const database = await ctx.database()
  const options = { databaseUrl: database.url, owner: database.owner, name: 'service-me', staff: STAFF }
  const { tenant, result: turns } = await withSeededService(ctx, options, async (service, tenant) => {
    const requests = meRequests(await loginStaff(service.url, tenant))
    const ceiling = await startBaseline(CEILING, database.url, ctx.jwtSecret)
    try {
      const measured: Turns[] = []
      for (const connections of benchConfig.meConnections) {
        // The ceiling takes the service's own tokens: one database, one signing secret.
        const [me, without] = await measureInTurns(
          ctx,
          'me',
          `GET /v1/me, ${connections} connections`,
          [
            { label: 'service', service, watch: { service: service.pid } },
            { label: 'db-no-revocation', service: ceiling, watch: { [CEILING]: ceiling.pid }, requests: { ...requests, path: '/me-without-revocation' } },
          ],
          requests,
          connections,
        )
        measured.push({ connections, service: me!, ceiling: without! })
      }
      return measured
    } finally {
      await ceiling.stop()
    }
  })
  // Measured while no instance runs, at BENCH_CONNECTIONS, and shared with the other scenarios.
  const target = { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret }
  const db = await ctx.baselines.get('db', target)
  const jwt = await ctx.baselines.get('jwt', target)
  const standard = turns.find((turn) => turn.connections === benchConfig.connections) ?? turns[0]!
  ctx.addRow(ratioRow('GET /v1/me', standard.service, db, 0.9, { notes: standard.service.cpu }))
  for (const turn of turns) {
    ctx.addRow(
      ratioRow(`GET /v1/me (stretch), ${turn.connections} connections, in turns`, turn.service, ceilingFigure(turn.ceiling), 1.0, {
        notes: `ceiling: ${turn.ceiling.cpu}`,
      }),
    )
  }
  ctx.addRow(infoRow('GET /v1/me vs JWT only', standard.service, jwt))
}

if (isMain(import.meta.url)) await runStandalone(me)
