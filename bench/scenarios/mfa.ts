/**
 * The second factor at sign-in, on one instance and one database where thousands of the tenant's users have TOTP:
 *
 * (a) POST /v1/login of staff without a factor, measured as login.ts measures it (each connection one user logging in
 *     again and again through the portal entry) against the bcrypt ceiling: target >= 0.9 x, now that every
 *     credential lookup also asks whether the user has a factor.
 * (b) POST /v1/login/mfa with a valid TOTP code. A TOTP step signs a user in once and the step that opens the session
 *     uses its challenge up, so every request is another user's: before each run the setup inserts users with TOTP
 *     enabled (the secret sealed under the key the instance derives from the same secret it is given) and one
 *     challenge each (the SHA-256 of the token in mfa_challenges, the token in that request's cookie), set-based
 *     through the owner connection. The harness process sends the steps, each with its own cookie and the user's code
 *     computed just before it goes out: BENCH_MFA_STEPS per run on BENCH_CONNECTIONS connections (service CPU per
 *     step), then 500 one at a time (latency without queueing). Beside them, in the same run once the instance has
 *     stopped: one bcrypt.compare at the instance's SVC_BCRYPT_COST, timed one at a time in the harness process.
 *     Target: a step's service CPU, and its p50 alone, below one comparison's.
 */
import bcrypt from 'bcrypt'
import { sql } from 'kysely'
import { Agent, request } from 'node:http'
import { ACCESS_COOKIE } from '../../lib/sign-in/cookies.js'
import { dataKeyRingFromEnv } from '../../lib/data-keys/ring-from-env.js'
import type { KeyRing } from '../../lib/crypto/key-ring.js'
import { MFA_COOKIE, mfaTokenHash, newMfaToken } from '../../lib/account-security/second-factor/mfa-token.js'
import { sealSecret } from '../../lib/account-security/second-factor/sealed-secret.js'
import { mfaSettings } from '../../lib/account-security/second-factor/settings.js'
import { newTotpSecret, totpCode } from '../../lib/account-security/second-factor/totp.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { cpuSnapshot, cpuUse, describeCpu, type CpuUse } from '../lib/cpu.js'
import type { BenchDatabase } from '../lib/database.js'
import { log, measure, median, noiseIn, NOISY_RUN_RETRIES, quiet } from '../lib/load.js'
import { checkRun, heading } from '../lib/scenario-helpers.js'
import { passwordHash, PASSWORD } from '../lib/seed.js'
import { productionEnv, type RunningProcess } from '../lib/service.js'
import { standardLoad, withSeededService } from '../lib/service-scenario.js'
import { loginCeilingRow, loginRequests } from './login.js'

const SCENARIO = 'mfa'
/** Staff without a factor: the users of part (a), as in login.ts. */
const STAFF = 64
const WARMUP_STEPS = 300
/** Steps sent one at a time, for the latency without queueing. */
const UNQUEUED_STEPS = 500
/** Sequential bcrypt comparisons per timing run. */
const COMPARISONS = 40

/** A user with TOTP enabled and a live challenge: one second step to take. */
interface StepUser {
  userId: number
  secret: string
  /** The mfa cookie's value: the challenge's token. */
  cookie: string
}

/**
 * Users of the tenant with TOTP enabled, each with one challenge, inserted as the second factor's enrolment and a
 * password step would leave them; `take` hands each out once.
 */
class FactorUsers {
  private made = 0
  private readonly ready: StepUser[] = []

  constructor(
    private readonly database: BenchDatabase,
    private readonly tenantId: number,
    private readonly key: KeyRing,
  ) {}

  /** Users with a factor in the database so far. */
  get count(): number {
    return this.made
  }

  async take(count: number): Promise<StepUser[]> {
    if (this.ready.length < count) await this.add(count - this.ready.length)
    return this.ready.splice(0, count)
  }

  async add(count: number): Promise<void> {
    const { owner } = this.database
    const tenantId = this.tenantId
    const from = this.made + 1
    const to = this.made + count
    const { rows } = await sql<{ id: number | string }>`
      insert into users (tenant_id, user_login_id, password_hash, name, role, avatar_seed)
      select ${tenantId}, 'bench-mfa-' || g, ${await passwordHash()}, 'Factor ' || g, 'MANAGER', 'mfa-' || g
      from generate_series(${from}::int, ${to}::int) g
      returning id`.execute(owner)
    this.made = to
    const users = rows.map((row) => {
      const userId = Number(row.id)
      const secret = newTotpSecret()
      const token = newMfaToken(tenantId)
      return { userId, secret, cookie: token.text, sealed: sealSecret(this.key, { tenantId, userId }, secret), tokenHash: mfaTokenHash(token) }
    })
    const ids = users.map((user) => user.userId)
    await sql`
      insert into user_second_factors (tenant_id, user_id, totp_secret, totp_enabled_at)
      select ${tenantId}, f.user_id, f.sealed, now()
      from unnest(${ids}::bigint[], ${users.map((user) => user.sealed)}::text[]) as f(user_id, sealed)`.execute(owner)
    // An hour rather than the instance's SVC_MFA_TOKEN_TTL_SECONDS: a run may wait for an idle machine first.
    await sql`
      insert into mfa_challenges (tenant_id, token_hash, user_id, expires_at)
      select ${tenantId}, c.token_hash, c.user_id, now() + interval '1 hour'
      from unnest(${ids}::bigint[], ${users.map((user) => user.tokenHash)}::text[]) as c(user_id, token_hash)`.execute(owner)
    this.ready.push(...users.map(({ userId, secret, cookie }) => ({ userId, secret, cookie })))
  }
}

interface Fired {
  /** Milliseconds per step, request sent to answer read. */
  timings: number[]
  /** Answers 200 with a session's cookies. */
  ok: number
  statusCodes: Record<string, number>
  seconds: number
}

/** One POST /v1/login/mfa; its status, or 0 for a 200 without the session's cookies. */
function postStep(agent: Agent, url: URL, user: StepUser): Promise<number> {
  const body = JSON.stringify({ method: 'TOTP', code: totpCode(user.secret) })
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/v1/login/mfa',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), cookie: `${MFA_COOKIE}=${user.cookie}` },
      },
      (res) => {
        const session = (res.headers['set-cookie'] ?? []).some((cookie) => cookie.startsWith(`${ACCESS_COOKIE}=`))
        res.resume()
        res.once('end', () => resolve(res.statusCode === 200 && !session ? 0 : (res.statusCode ?? 0)))
        res.once('error', reject)
      },
    )
    req.once('error', reject)
    req.end(body)
  })
}

/** Every user's second step, `connections` at a time, each timed from its request to its answer. */
async function fireSteps(service: RunningProcess, users: StepUser[], connections: number): Promise<Fired> {
  const url = new URL(service.url)
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const timings: number[] = []
  const statusCodes: Record<string, number> = {}
  let next = 0
  const started = performance.now()
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < users.length) {
          const user = users[next++]!
          const sent = performance.now()
          const status = await postStep(agent, url, user)
          timings.push(performance.now() - sent)
          statusCodes[status] = (statusCodes[status] ?? 0) + 1
        }
      }),
    )
  } finally {
    agent.destroy()
  }
  return { timings, ok: statusCodes['200'] ?? 0, statusCodes, seconds: (performance.now() - started) / 1000 }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

interface StepRun {
  rps: number
  p50: number
  p99: number
  failures: number
  statusCodes: Record<string, number>
  /** CPU milliseconds per answered step. */
  serviceMs: number
  postgresMs: number
  cpu: string
}

/** CPU milliseconds of `percent` (of one core) over the window, per step. */
const msPer = (percent: number, use: CpuUse, steps: number) => ((percent / 100) * use.seconds * 1000) / Math.max(steps, 1)

/**
 * One run of `count` steps by users never used before; a measured run disturbed by other processes is repeated with
 * new ones (a warm-up is not, as load.ts does not repeat its warm-ups).
 */
async function stepRun(
  service: RunningProcess,
  factorUsers: FactorUsers,
  count: number,
  connections: number,
  label: string,
  retries = NOISY_RUN_RETRIES,
): Promise<StepRun> {
  for (let attempt = 1; ; attempt++) {
    const users = await factorUsers.take(count)
    await quiet()
    const watch = { service: service.pid, 'harness (client)': process.pid }
    const before = await cpuSnapshot(watch)
    const fired = await fireSteps(service, users, connections)
    const use = cpuUse(before, await cpuSnapshot(watch))
    const run: StepRun = {
      rps: fired.ok / fired.seconds,
      p50: percentile(fired.timings, 50),
      p99: percentile(fired.timings, 99),
      failures: users.length - fired.ok,
      statusCodes: fired.statusCodes,
      serviceMs: msPer(use.processes.service ?? 0, use, fired.ok),
      postgresMs: msPer(use.postgres, use, fired.ok),
      cpu: describeCpu(use),
    }
    const codes = Object.entries(fired.statusCodes).map(([code, n]) => `${code}x${n}`).join(' ')
    log(
      `  ${label}: ${fired.ok}/${users.length} steps in ${fired.seconds.toFixed(2)} s, ${run.rps.toFixed(1)} req/s, p50 ${run.p50.toFixed(2)} ms, ` +
        `p99 ${run.p99.toFixed(2)} ms, CPU per step: service ${run.serviceMs.toFixed(2)} ms, postgres ${run.postgresMs.toFixed(2)} ms` +
        `${run.failures ? `, FAILURES ${run.failures} (${codes})` : ''}\n      ${run.cpu}`,
    )
    const noise = noiseIn(use)
    if (!noise || attempt > retries) return run
    log(`  ${label}: ${noise}; repeating it with other users`)
  }
}

export interface Comparison {
  /** Wall milliseconds of one comparison, median. */
  p50: number
  /** CPU milliseconds per comparison (the harness process, every thread). */
  cpuMs: number
  cpu: string
}

/** bcrypt.compare at `cost`, one at a time on the default thread pool, in the harness process (nothing else runs). */
export async function oneComparison(cost: number): Promise<Comparison> {
  const hash = await bcrypt.hash(PASSWORD, cost)
  for (let attempt = 1; ; attempt++) {
    await quiet()
    const watch = { 'harness (bcrypt.compare)': process.pid }
    const before = await cpuSnapshot(watch)
    const cpuBefore = process.cpuUsage()
    const timings: number[] = []
    for (let i = 0; i < COMPARISONS; i++) {
      const started = performance.now()
      if (!(await bcrypt.compare(PASSWORD, hash))) throw new Error('bcrypt.compare failed')
      timings.push(performance.now() - started)
    }
    const cpu = process.cpuUsage(cpuBefore)
    const use = cpuUse(before, await cpuSnapshot(watch))
    const comparison = { p50: median(timings), cpuMs: (cpu.user + cpu.system) / 1000 / COMPARISONS, cpu: describeCpu(use) }
    log(`  one bcrypt.compare (cost ${cost}): p50 ${comparison.p50.toFixed(2)} ms, ${comparison.cpuMs.toFixed(2)} ms CPU each\n      ${comparison.cpu}`)
    const noise = noiseIn(use)
    if (!noise || attempt > NOISY_RUN_RETRIES) return comparison
    log(`  one bcrypt.compare: ${noise}; repeating it`)
  }
}

function medianRun(runs: StepRun[]): StepRun {
  const middle = [...runs].sort((a, b) => a.serviceMs - b.serviceMs)[Math.floor((runs.length - 1) / 2)]!
  const statusCodes: Record<string, number> = {}
  for (const run of runs) for (const [code, n] of Object.entries(run.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n
  return {
    rps: median(runs.map((run) => run.rps)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    failures: runs.reduce((sum, run) => sum + run.failures, 0),
    statusCodes,
    serviceMs: median(runs.map((run) => run.serviceMs)),
    postgresMs: median(runs.map((run) => run.postgresMs)),
    cpu: middle.cpu,
  }
}

export async function mfa(ctx: BenchContext): Promise<void> {
  heading('second factor: POST /v1/login without a factor, POST /v1/login/mfa (TOTP)')
  const database = await ctx.database()
  // The instance derives its second factor's keys from these (SVC_OTP_SECRET unset: from SVC_JWT_SECRET); the setup
  // seals the secrets under the same keys.
  const env = productionEnv(database.url, ctx.jwtSecret)
  const key = mfaSettings({ SVC_MFA_TOKEN_TTL_SECONDS: 300 }, dataKeyRingFromEnv({ ...env, NODE_ENV: 'production' }).ring).keys
  const cost = Number(env.SVC_BCRYPT_COST)
  const steps = benchConfig.mfaSteps
  const connections = benchConfig.connections
  const loginLabel = 'POST /v1/login, users without a factor'
  const options = { databaseUrl: database.url, owner: database.owner, name: 'service-mfa', staff: STAFF }
  const { tenant, result } = await withSeededService(ctx, options, async (service, tenant) => {
    const factorUsers = new FactorUsers(database, tenant.tenantId, key)
    // Users with TOTP are in the tenant while its other users log in; the first second steps use them up.
    await factorUsers.add(steps)
    log(`  ${factorUsers.count} users with TOTP enabled and a challenge each`)
    const login = await measure({ label: loginLabel, watch: { service: service.pid }, spec: () => standardLoad(service, loginRequests(tenant)) })
    checkRun(ctx, `${SCENARIO} ${loginLabel}`, service, login)
    const factorsDuringLogin = factorUsers.count

    const stepLabel = `POST /v1/login/mfa TOTP, ${connections} connections`
    const warm = await stepRun(service, factorUsers, Math.min(WARMUP_STEPS, steps), connections, `${stepLabel}: warm-up`, 0)
    if (warm.rps === 0) throw new Error(`no second step succeeded in the warm-up (status codes ${JSON.stringify(warm.statusCodes)})`)
    const runs: StepRun[] = []
    for (let i = 0; i < benchConfig.runs; i++) runs.push(await stepRun(service, factorUsers, steps, connections, `${stepLabel}: run ${i + 1}/${benchConfig.runs}`))
    const alone = await stepRun(service, factorUsers, UNQUEUED_STEPS, 1, 'POST /v1/login/mfa TOTP, 1 connection')
    checkRun(ctx, `${SCENARIO} POST /v1/login/mfa`, service)
    return { login, factorsDuringLogin, warm, loaded: medianRun(runs), alone, factorsAtEnd: factorUsers.count }
  })

  // Both references are measured while no instance runs.
  const bcryptCeiling = await ctx.baselines.get('bcrypt', { databaseUrl: database.url, tenant, jwtSecret: ctx.jwtSecret })
  const comparison = await oneComparison(cost)

  const { login, warm, loaded, alone } = result
  ctx.addRow(loginCeilingRow(`${loginLabel} (${result.factorsDuringLogin.toLocaleString('en')} others have TOTP)`, login, bcryptCeiling))
  ctx.addRow({
    scenario: `one bcrypt.compare, cost ${cost}, one at a time (harness process)`,
    value: comparison.cpuMs,
    unit: 'ms CPU',
    p50: comparison.p50,
    target: '(the reference of the second step)',
    met: null,
    notes: `${COMPARISONS} comparisons: p50 ${comparison.p50.toFixed(2)} ms, ${comparison.cpuMs.toFixed(2)} ms CPU each; ${comparison.cpu}`,
  })
  for (const [label, run] of [
    ['warm-up', warm],
    [`${connections} connections`, loaded],
    ['1 connection', alone],
  ] as const) {
    if (run.failures > 0) ctx.note(`${SCENARIO} POST /v1/login/mfa ${label}: ${run.failures} steps without a session (status codes ${JSON.stringify(run.statusCodes)})`)
  }
  const both = loaded.serviceMs + loaded.postgresMs
  const cpuRatio = loaded.serviceMs / comparison.cpuMs
  ctx.addRow({
    scenario: `POST /v1/login/mfa TOTP, ${connections} connections: service CPU per step`,
    value: loaded.rps,
    unit: 'req/s',
    p50: loaded.p50,
    p99: loaded.p99,
    baseline: 'one bcrypt.compare, ms CPU',
    baselineValue: comparison.cpuMs,
    ratio: cpuRatio,
    target: '< 1 x one bcrypt.compare (CPU)',
    met: cpuRatio < 1 && loaded.failures === 0,
    notes:
      `service ${loaded.serviceMs.toFixed(2)} ms CPU per step (median of ${benchConfig.runs} run${benchConfig.runs === 1 ? '' : 's'} of ${steps.toLocaleString('en')} users each), ` +
      `PostgreSQL ${loaded.postgresMs.toFixed(2)} ms, together ${both.toFixed(2)} ms = ${(both / comparison.cpuMs).toFixed(2)} x one comparison; ` +
      `${result.factorsAtEnd.toLocaleString('en')} users with TOTP at the end; median run: ${loaded.cpu}`,
  })
  const latencyRatio = alone.p50 / comparison.p50
  ctx.addRow({
    scenario: 'POST /v1/login/mfa TOTP, 1 connection: p50 latency',
    value: alone.rps,
    unit: 'req/s',
    p50: alone.p50,
    p99: alone.p99,
    baseline: 'one bcrypt.compare, p50 ms',
    baselineValue: comparison.p50,
    ratio: latencyRatio,
    target: '< 1 x one bcrypt.compare (p50)',
    met: latencyRatio < 1 && alone.failures === 0,
    notes: `${UNQUEUED_STEPS} steps one at a time: service ${alone.serviceMs.toFixed(2)} ms CPU, PostgreSQL ${alone.postgresMs.toFixed(2)} ms per step; ${alone.cpu}`,
  })
}

if (isMain(import.meta.url)) await runStandalone(mfa)
