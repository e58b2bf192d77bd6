import type { BaselineFigure } from './baselines.js'
import type { BenchContext } from './context.js'
import { log, type Measurement } from './load.js'
import type { SessionTokens } from './seed.js'
import { loggedProblems, summariseProblems, type RunningProcess } from './service.js'

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** GET /v1/me, each connection one signed-in staff member with its own bearer token. */
export function meRequests(sessions: SessionTokens[]) {
  return { method: 'GET' as const, path: '/v1/me', connectionHeaders: sessions.map((session) => bearer(session.access)) }
}

/** Records what the service logged at warn level or above, and any failed answers, as notes of the scenario. */
export function checkRun(ctx: BenchContext, scenario: string, service: RunningProcess, measured?: Measurement): void {
  const problems = loggedProblems(service)
  if (problems.length > 0) {
    ctx.note(`${scenario}: the service logged ${summariseProblems(problems)}`)
  }
  if (measured && measured.failures > 0) {
    const codes: Record<string, number> = {}
    for (const run of measured.runs) for (const [code, count] of Object.entries(run.statusCodes)) codes[code] = (codes[code] ?? 0) + count
    ctx.note(`${scenario}: ${measured.failures} failed answers or connection errors over the measured runs (status codes ${JSON.stringify(codes)})`)
  }
}

/** The figures of a measurement as a results-table row starts: median req/s, p50 and p99. */
export function measuredRow(scenario: string, measured: Pick<Measurement, 'rps' | 'p50' | 'p99'>) {
  return { scenario, value: measured.rps, unit: 'req/s', p50: measured.p50, p99: measured.p99 }
}

function againstBaseline(scenario: string, measured: Measurement, baseline: BaselineFigure) {
  return { ...measuredRow(scenario, measured), baseline: baseline.key, baselineValue: baseline.rps, ratio: measured.rps / baseline.rps }
}

export function ratioRow(
  scenario: string,
  measured: Measurement,
  baseline: BaselineFigure,
  minimum: number,
  extra: { notes?: string; targetSuffix?: string; alsoRequire?: boolean } = {},
) {
  const row = againstBaseline(scenario, measured, baseline)
  return {
    ...row,
    target: `>= ${minimum.toFixed(1)} x ${baseline.key}${extra.targetSuffix ?? ''}`,
    met: row.ratio >= minimum && (extra.alsoRequire ?? true) && measured.failures === 0,
    ...(extra.notes !== undefined && { notes: extra.notes }),
  }
}

export function infoRow(scenario: string, measured: Measurement, baseline: BaselineFigure, notes?: string) {
  return {
    ...againstBaseline(scenario, measured, baseline),
    target: '(context)',
    met: null,
    ...(notes !== undefined && { notes }),
  }
}

export function heading(title: string): void {
  log(`\n== ${title} ==`)
}
