/**
 * POST /v1/password/forgot for a known user and for an unknown one, side by side on one instance, measured in turns:
 * the answer must not tell them apart, by body (tests) or by time (here). Known: staff with verified phones, each
 * connection one of them; unknown: login ids no account has, in the same academy. Codes are really issued: the resend
 * interval is 0 and the day's counters are cleared before every known run, so each run does a known user's whole work
 * (lookup, limits, the code, the SMS in the outbox; the dispatcher is off). How many codes each known run issued is
 * in the notes (0 would mean the comparison measured nothing).
 *
 * The answer leaves before any of that work starts (lib/account-security/recovery/recovery-requests.ts). What a prober sees is paced
 * requests from one address, the per-address budget keeping it far below saturation: known and unknown alternate,
 * one request every PACE_MS, timed by the client. Target: the two p50s within 10 % of each other. Back to back on
 * connections that never pause (the standard load, 10 connections), a known user's work done after its answer takes
 * CPU from the requests that follow it, known or not, in that run: shown for context.
 */
import { sql } from 'kysely'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { BenchDatabase } from '../lib/database.js'
import { log, measureAlternating, type Measurement } from '../lib/load.js'
import { checkRun, heading, measuredRow } from '../lib/scenario-helpers.js'
import type { SeededTenant } from '../lib/seed.js'
import type { RunningProcess } from '../lib/service.js'
import { standardLoad, withSeededService, type Requests } from '../lib/service-scenario.js'

const SCENARIO = 'forgot'
const STAFF = 64
const TOLERANCE = 0.1
/** Paced probing: pairs of one known and one unknown request, this far apart. */
const PACED_PAIRS = 400
const PACE_MS = 20

function forgotRequests(tenant: SeededTenant, loginIds: string[]): Requests {
  const bodies = loginIds.map((userLoginId) => JSON.stringify({ userLoginId, customId: tenant.customId }))
  return { method: 'POST', path: '/v1/password/forgot', headers: { 'content-type': 'application/json' }, connectionBodies: bodies }
}

async function codesIssued(database: BenchDatabase, tenantId: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from sms_messages where tenant_id = ${tenantId} and kind = 'VERIFICATION_CODE'`.execute(database.owner)
  return rows[0]!.n
}

interface Compared {
  known: Measurement
  unknown: Measurement
  /** Codes issued during each known run (warm-up first, repeats of noisy runs included). */
  issued: number[]
}

/** Known and unknown in turns on `connections` connections. */
async function inTurns(ctx: BenchContext, database: BenchDatabase, service: RunningProcess, tenant: SeededTenant, connections: number): Promise<Compared> {
  const known = forgotRequests(tenant, tenant.staff.map((user) => user.loginId))
  const unknown = forgotRequests(tenant, tenant.staff.map((user) => `nobody-${user.loginId}`))
  const watch = { service: service.pid }
  const issued: number[] = []
  let counted: number | null = null
  const countSinceLast = async () => {
    const now = await codesIssued(database, tenant.tenantId)
    if (counted !== null) issued.push(now - counted)
    counted = now
  }
  const label = `POST /v1/password/forgot, ${connections} connection${connections === 1 ? '' : 's'}`
  const [knownMeasured, unknownMeasured] = await measureAlternating([
    {
      label: `${label} known`,
      watch,
      spec: async () => {
        await countSinceLast()
        // A fresh day's allowance: the known runs keep issuing codes rather than meeting the daily cap.
        await sql`delete from one_time_code_days where tenant_id = ${tenant.tenantId}`.execute(database.owner)
        await sql`delete from one_time_code_phone_days`.execute(database.owner)
        return { ...standardLoad(service, known), connections }
      },
    },
    {
      label: `${label} unknown`,
      watch,
      spec: async () => {
        await countSinceLast()
        return { ...standardLoad(service, unknown), connections }
      },
    },
  ])
  checkRun(ctx, `${SCENARIO} ${label}`, service)
  // Each count closes the run before it: the known runs are the even entries (warm-ups first).
  await countSinceLast()
  return { known: knownMeasured!, unknown: unknownMeasured!, issued: issued.filter((_count, index) => index % 2 === 0) }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** Alternating known and unknown requests, one every PACE_MS, each timed by the client; p50 of each, in ms. */
async function paced(service: RunningProcess, database: BenchDatabase, tenant: SeededTenant) {
  await sql`delete from one_time_code_days where tenant_id = ${tenant.tenantId}`.execute(database.owner)
  await sql`delete from one_time_code_phone_days`.execute(database.owner)
  const before = await codesIssued(database, tenant.tenantId)
  const timings = { known: [] as number[], unknown: [] as number[] }
  const ask = async (kind: 'known' | 'unknown', userLoginId: string) => {
    const started = performance.now()
    const response = await fetch(`${service.url}/v1/password/forgot`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userLoginId, customId: tenant.customId }),
    })
    await response.arrayBuffer()
    timings[kind].push(performance.now() - started)
    if (response.status !== 202) throw new Error(`forgot answered ${response.status}`)
    await new Promise((resolve) => setTimeout(resolve, PACE_MS))
  }
  for (let i = 0; i < PACED_PAIRS; i++) {
    const user = tenant.staff[i % tenant.staff.length]!
    // Which goes first alternates too, so neither always follows the other's work.
    if (i % 2 === 0) {
      await ask('known', user.loginId)
      await ask('unknown', `nobody-${user.loginId}`)
    } else {
      await ask('unknown', `nobody-${user.loginId}`)
      await ask('known', user.loginId)
    }
  }
  const issued = (await codesIssued(database, tenant.tenantId)) - before
  // The first pairs warm the connection and the instance: left out.
  const measured = (values: number[]) => median(values.slice(20))
  return { known: measured(timings.known), unknown: measured(timings.unknown), issued }
}

function rows(ctx: BenchContext, name: string, compared: Compared, target: boolean): void {
  const { known, unknown, issued } = compared
  const ratio = known.p50 / unknown.p50
  log(`  ${name}: codes issued per known run (warm-up first): ${issued.join(', ')}`)
  if (issued.every((count) => count === 0)) ctx.note(`forgot ${name}: no code was issued in any known run; the comparison measured nothing`)
  ctx.addRow({ ...measuredRow(`forgot ${name}, unknown user`, unknown), target: '(the reference)', met: null, notes: unknown.cpu })
  ctx.addRow({
    ...measuredRow(`forgot ${name}, known user`, known),
    baseline: 'unknown user p50 ms',
    baselineValue: unknown.p50,
    ratio,
    target: target ? `p50 within ${TOLERANCE * 100} % of the unknown user's` : '(context: the known users\' work after the answer under saturation)',
    met: target ? Math.abs(ratio - 1) <= TOLERANCE && known.failures === 0 && unknown.failures === 0 : null,
    notes: `p50 ${known.p50.toFixed(2)} ms vs ${unknown.p50.toFixed(2)} ms (ratio of p50s); codes issued per known run: ${issued.join(', ')}; ${known.cpu}`,
  })
}

export async function forgot(ctx: BenchContext): Promise<void> {
  heading('POST /v1/password/forgot, known vs unknown user')
  const database = await ctx.database()
  const env = { SVC_SMS_DISPATCHER: 'off', SVC_OTP_RESEND_SECONDS: '0', SVC_OTP_DAILY_LIMIT: '1000' }
  const options = { databaseUrl: database.url, owner: database.owner, name: 'service-forgot', env, staff: STAFF }
  const { result } = await withSeededService(ctx, options, async (service, tenant) => {
    // A verified phone of its own for every staff member (the per-number cap counts across accounts). Two statements:
    // a phone change clears the verification (a trigger on users), even in the statement that sets it.
    await sql`
      update users set phone = '010' || lpad((70000000 + id % 10000000)::text, 8, '0')
      where tenant_id = ${tenant.tenantId} and role = 'MANAGER'`.execute(database.owner)
    await sql`update users set phone_verified_at = now() where tenant_id = ${tenant.tenantId} and role = 'MANAGER'`.execute(database.owner)
    const alone = await paced(service, database, tenant)
    log(`  paced, ${PACED_PAIRS} pairs: known p50 ${alone.known.toFixed(2)} ms, unknown p50 ${alone.unknown.toFixed(2)} ms, ${alone.issued} codes issued`)
    const loaded = await inTurns(ctx, database, service, tenant, 10)
    return { alone, loaded }
  })
  const { alone } = result
  const ratio = alone.known / alone.unknown
  if (alone.issued === 0) ctx.note('forgot paced: no code was issued; the comparison measured nothing')
  ctx.addRow({
    scenario: `forgot paced (one every ${PACE_MS} ms, known and unknown alternating), known user`,
    value: alone.known,
    unit: 'ms p50',
    baseline: 'unknown user p50 ms',
    baselineValue: alone.unknown,
    ratio,
    target: `within ${TOLERANCE * 100} % of the unknown user's`,
    met: Math.abs(ratio - 1) <= TOLERANCE && alone.issued > 0,
    notes: `known p50 ${alone.known.toFixed(2)} ms, unknown p50 ${alone.unknown.toFixed(2)} ms over ${PACED_PAIRS - 20} pairs each; ${alone.issued} codes issued`,
  })
  rows(ctx, 'under load', result.loaded, false)
}

if (isMain(import.meta.url)) await runStandalone(forgot)
