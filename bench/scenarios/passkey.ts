/**
 * Passkey sign-in against one bcrypt comparison, in service CPU. Each sign-in is the two requests a client sends:
 * POST /v1/login/passkey/options, then POST /v1/login/passkey with the assertion. The assertions are real: a software
 * authenticator per connection (test/support/passkey-authenticator.ts: keys made with node:crypto, half ES256, half
 * EdDSA), its credential inserted as an enrolment leaves it (passkey_directory filled by the trigger), signs each
 * challenge in the harness process, so the service does everything a production sign-in does: the challenge used
 * up, the directory read, the verification by @simplewebauthn/server, the counter, the session and its audit event.
 * A connection signs one user in again and again (the counter must go up, so one user's sign-ins never overlap).
 *
 * Measured: BENCH_PASSKEY_SIGN_INS sign-ins per run on BENCH_CONNECTIONS connections (service and PostgreSQL CPU per
 * sign-in, from /proc), then 300 one at a time (p50 without queueing); beside them, once the instance has stopped,
 * one bcrypt.compare at the instance's SVC_BCRYPT_COST timed one at a time in the harness process (process.cpuUsage,
 * every thread). Target: a sign-in's service CPU below one comparison's.
 *
 *   npm run bench:passkey
 */
import { sql } from 'kysely'
import { Agent, request } from 'node:http'
import { ACCESS_COOKIE } from '../../lib/sign-in/cookies.js'
import { SoftAuthenticator } from '../../test/support/passkey-authenticator.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { cpuSnapshot, cpuUse, describeCpu } from '../lib/cpu.js'
import { log, median, noiseIn, NOISY_RUN_RETRIES, quiet } from '../lib/load.js'
import { checkRun, heading } from '../lib/scenario-helpers.js'
import { productionEnv, type RunningProcess } from '../lib/service.js'
import { withSeededService } from '../lib/service-scenario.js'
import { oneComparison } from './mfa.js'

const SCENARIO = 'passkey'
const RP_ID = 'bench.example'
const ORIGIN = 'https://bench.example'
const WARMUP_SIGN_INS = 300
const UNQUEUED_SIGN_INS = 300
const SIGN_INS = Number(process.env.BENCH_PASSKEY_SIGN_INS ?? 2000)

interface Signer {
  userId: number
  authenticator: SoftAuthenticator
}

function post(agent: Agent, url: URL, path: string, body: unknown): Promise<{ status: number; json: any; session: boolean }> {
  const text = body === undefined ? '' : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        agent,
        headers: text ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : { 'content-length': 0 },
      },
      (res) => {
        const chunks: Buffer[] = []
        const session = (res.headers['set-cookie'] ?? []).some((cookie) => cookie.startsWith(`${ACCESS_COOKIE}=`))
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.once('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8')
          resolve({ status: res.statusCode ?? 0, json: raw ? JSON.parse(raw) : null, session })
        })
        res.once('error', reject)
      },
    )
    req.once('error', reject)
    req.end(text)
  })
}

/** One whole sign-in: options, the authenticator's assertion, the answer; its status (0: a 200 without cookies). */
async function signIn(agent: Agent, url: URL, signer: Signer): Promise<number> {
  const options = await post(agent, url, '/v1/login/passkey/options', undefined)
  if (options.status !== 200) return options.status
  const { challengeId } = options.json
  const answer = await post(agent, url, '/v1/login/passkey', { challengeId, response: signer.authenticator.get(options.json) })
  return answer.status === 200 && !answer.session ? 0 : answer.status
}

interface Run {
  rps: number
  p50: number
  failures: number
  statusCodes: Record<string, number>
  serviceMs: number
  postgresMs: number
  cpu: string
}

async function run(service: RunningProcess, signers: Signer[], count: number, label: string, retries = NOISY_RUN_RETRIES): Promise<Run> {
  const url = new URL(service.url)
  for (let attempt = 1; ; attempt++) {
    await quiet()
    const agent = new Agent({ keepAlive: true, maxSockets: signers.length })
    const watch = { service: service.pid, 'harness (client)': process.pid }
    const before = await cpuSnapshot(watch)
    const timings: number[] = []
    const statusCodes: Record<string, number> = {}
    let started = 0
    const began = performance.now()
    await Promise.all(
      signers.map(async (signer) => {
        while (started < count) {
          started++
          const sent = performance.now()
          const status = await signIn(agent, url, signer)
          timings.push(performance.now() - sent)
          statusCodes[status] = (statusCodes[status] ?? 0) + 1
        }
      }),
    )
    const seconds = (performance.now() - began) / 1000
    agent.destroy()
    const use = cpuUse(before, await cpuSnapshot(watch))
    const ok = statusCodes['200'] ?? 0
    const per = (percent: number) => ((percent / 100) * use.seconds * 1000) / Math.max(ok, 1)
    const result: Run = {
      rps: ok / seconds,
      p50: median(timings),
      failures: count - ok,
      statusCodes,
      serviceMs: per(use.processes.service ?? 0),
      postgresMs: per(use.postgres),
      cpu: describeCpu(use),
    }
    log(
      `  ${label}: ${ok}/${count} sign-ins in ${seconds.toFixed(2)} s, ${result.rps.toFixed(1)}/s, p50 ${result.p50.toFixed(2)} ms, ` +
        `CPU per sign-in: service ${result.serviceMs.toFixed(2)} ms, postgres ${result.postgresMs.toFixed(2)} ms` +
        `${result.failures ? `, FAILURES ${result.failures} (${JSON.stringify(statusCodes)})` : ''}\n      ${result.cpu}`,
    )
    const noise = noiseIn(use)
    if (!noise || attempt > retries) return result
    log(`  ${label}: ${noise}; repeating it`)
  }
}

export async function passkey(ctx: BenchContext): Promise<void> {
  heading('passkey sign-in: POST /v1/login/passkey/options + POST /v1/login/passkey, against one bcrypt.compare')
  const database = await ctx.database()
  const env = productionEnv(database.url, ctx.jwtSecret)
  const cost = Number(env.SVC_BCRYPT_COST)
  const connections = benchConfig.connections
  const options = {
    databaseUrl: database.url,
    owner: database.owner,
    name: 'service-passkey',
    staff: connections,
    env: { SVC_WEBAUTHN_RP_ID: RP_ID, SVC_WEBAUTHN_ORIGINS: ORIGIN },
  }
  const { result } = await withSeededService(ctx, options, async (service, tenant) => {
    // One user and authenticator per connection, its credential stored as an enrolment stores it.
    const signers: Signer[] = tenant.staff.slice(0, connections).map((user, i) => ({
      userId: user.id,
      authenticator: new SoftAuthenticator(i % 2 === 0 ? 'ES256' : 'EdDSA', ORIGIN, RP_ID),
    }))
    for (const signer of signers) {
      await sql`
        insert into passkeys (tenant_id, user_id, credential_id, public_key, name)
        values (${tenant.tenantId}, ${signer.userId}, ${signer.authenticator.credentialId}, ${Buffer.from(signer.authenticator.coseKey)}, 'Bench')`.execute(database.owner)
    }
    const label = `passkey sign-in, ${connections} connections`
    const warm = await run(service, signers, WARMUP_SIGN_INS, `${label}: warm-up`, 0)
    if (warm.rps === 0) throw new Error(`no passkey sign-in succeeded in the warm-up (status codes ${JSON.stringify(warm.statusCodes)})`)
    const runs: Run[] = []
    for (let i = 0; i < benchConfig.runs; i++) runs.push(await run(service, signers, SIGN_INS, `${label}: run ${i + 1}/${benchConfig.runs}`))
    const alone = await run(service, signers.slice(0, 1), UNQUEUED_SIGN_INS, 'passkey sign-in, 1 connection')
    checkRun(ctx, `${SCENARIO} sign-in`, service)
    const sorted = [...runs].sort((a, b) => a.serviceMs - b.serviceMs)
    return { loaded: sorted[Math.floor((sorted.length - 1) / 2)]!, alone, failures: runs.reduce((sum, r) => sum + r.failures, 0) }
  })

  // Measured while no instance runs.
  const comparison = await oneComparison(cost)
  const { loaded, alone } = result
  if (result.failures > 0) ctx.note(`${SCENARIO}: ${result.failures} sign-ins without a session`)
  ctx.addRow({
    scenario: `one bcrypt.compare, cost ${cost}, one at a time (harness process)`,
    value: comparison.cpuMs,
    unit: 'ms CPU',
    p50: comparison.p50,
    target: '(the reference of a passkey sign-in)',
    met: null,
    notes: `p50 ${comparison.p50.toFixed(2)} ms, ${comparison.cpuMs.toFixed(2)} ms CPU each; ${comparison.cpu}`,
  })
  const ratio = loaded.serviceMs / comparison.cpuMs
  ctx.addRow({
    scenario: `passkey sign-in (options + assertion), ${connections} connections: service CPU per sign-in`,
    value: loaded.rps,
    unit: 'sign-ins/s',
    p50: loaded.p50,
    baseline: 'one bcrypt.compare, ms CPU',
    baselineValue: comparison.cpuMs,
    ratio,
    target: '< 1 x one bcrypt.compare (CPU)',
    met: ratio < 1 && result.failures === 0,
    notes:
      `service ${loaded.serviceMs.toFixed(2)} ms CPU per sign-in (median of ${benchConfig.runs} runs of ${SIGN_INS}), PostgreSQL ` +
      `${loaded.postgresMs.toFixed(2)} ms; 1 connection: p50 ${alone.p50.toFixed(2)} ms, service ${alone.serviceMs.toFixed(2)} ms CPU; ${loaded.cpu}`,
  })
}

if (isMain(import.meta.url)) await runStandalone(passkey)
