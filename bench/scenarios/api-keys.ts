/**
 * An integrator's API key against a staff member's access token, on the same instance, in turns: GET
 * /v1/sms/history (first page of 20 of a tenant with BENCH_API_KEY_MESSAGES messages) and POST /v1/sms/send (one
 * recipient, a fresh Idempotency-Key each, dispatcher off, no daily quota), both at the standard load. What a key
 * adds: its lookup (kept per instance after the first request), one SHA-256 and constant-time comparison, the
 * per-key budget (a share of it taken from the database every 100 requests at this budget) and the key's own
 * scope statement in place of the token's.
 * Targets: history with the key >= 0.9 x, send >= 0.95 x the access token's rate.
 */
import { sql } from 'kysely'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { log, measureAlternating, type Measurement } from '../lib/load.js'
import { bearer, checkRun, heading } from '../lib/scenario-helpers.js'
import { fillHistory, login } from '../lib/seed.js'
import { standardLoad, withSeededService } from '../lib/service-scenario.js'
import { HISTORY_PATH } from './history.js'
import { sendBody } from './send-10k.js'

const MESSAGES = Number(process.env.BENCH_API_KEY_MESSAGES ?? 20_000)

async function createKey(serviceUrl: string, access: string): Promise<string> {
  const response = await fetch(`${serviceUrl}/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(access) },
    body: JSON.stringify({ name: 'bench', scopes: ['sms:send', 'sms:read'] }),
  })
  if (response.status !== 201) throw new Error(`POST /v1/api-keys: ${response.status} ${await response.text()}`)
  return ((await response.json()) as { key: string }).key
}

export async function apiKeys(ctx: BenchContext): Promise<void> {
  heading('API key against access token: GET /v1/sms/history and POST /v1/sms/send, in turns')
  const database = await ctx.database()
  const env = {
    SVC_SMS_DISPATCHER: 'off',
    SVC_SMS_TENANT_DAILY_RECIPIENTS: '0',
    // High enough never to refuse the bench, so the budget's cost (not its refusals) is measured.
    SVC_API_KEY_PER_MINUTE: '1000000',
  }
  const options = { databaseUrl: database.url, owner: database.owner, name: 'service-api-keys', env, staff: 1 }
  const { result } = await withSeededService(ctx, options, async (service, tenant) => {
    await fillHistory(database.owner, tenant.tenantId, tenant.ownerId, tenant.staff[0]!.id, MESSAGES)
    await sql`vacuum analyze sms_messages`.execute(database.owner)
    log(`  filled ${MESSAGES.toLocaleString('en')} messages`)
    const owner = await login(service.url, tenant.customId, tenant.ownerLoginId)
    const key = await createKey(service.url, owner.access)
    const watch = { service: service.pid }
    const as = (credential: string, label: string, requests: Parameters<typeof standardLoad>[1]) => ({
      label,
      watch,
      spec: () => standardLoad(service, { ...requests, headers: { ...requests.headers, ...bearer(credential) } }),
    })
    const history = { method: 'GET' as const, path: HISTORY_PATH }
    const send = {
      method: 'POST' as const,
      path: '/v1/sms/send',
      headers: { 'content-type': 'application/json' },
      body: sendBody(1),
      uniqueHeader: 'idempotency-key',
    }
    const [historyToken, historyKey] = await measureAlternating([
      as(owner.access, 'history, access token', history),
      as(key, 'history, API key', history),
    ])
    const [sendToken, sendKey] = await measureAlternating([as(owner.access, 'send, access token', send), as(key, 'send, API key', send)])
    checkRun(ctx, 'API keys', service)
    return { historyToken: historyToken!, historyKey: historyKey!, sendToken: sendToken!, sendKey: sendKey! }
  })
  const row = (scenario: string, keyed: Measurement, token: Measurement, target: number) => {
    const ratio = keyed.rps / token.rps
    ctx.addRow({
      scenario,
      value: keyed.rps,
      unit: 'req/s',
      p50: keyed.p50,
      p99: keyed.p99,
      baseline: 'the same requests with an access token, in turns',
      baselineValue: token.rps,
      ratio,
      target: `>= ${target} x the access token`,
      met: ratio >= target && keyed.failures === 0 && token.failures === 0,
      notes: `${benchConfig.connections} connections; p50 ${keyed.p50.toFixed(1)} / ${token.p50.toFixed(1)} ms (key / token); ${keyed.cpu}`,
    })
  }
  row('GET /v1/sms/history with an API key', result.historyKey, result.historyToken, 0.9)
  row('POST /v1/sms/send (1 recipient) with an API key', result.sendKey, result.sendToken, 0.95)
}

if (isMain(import.meta.url)) await runStandalone(apiKeys)
