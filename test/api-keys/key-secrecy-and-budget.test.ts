import { describe, expect, it } from 'vitest'
import { ApiKeyBudget } from '../../lib/api-keys/key-budget.js'
import { ApiKeyResolver } from '../../lib/api-keys/key-resolver.js'
import { parseApiKey } from '../../lib/api-keys/key.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { itPostgres, useTestApp } from '../support/helper.js'
import { recordStatements } from '../support/statement-recorder.js'
import { newKey, recipients } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'
import { issueKey, withKey } from './api-key-fixtures.js'

describe('an API key is never in clear', () => {
  const lines: string[] = []
  const app = useTestApp({ env: { LOG_LEVEL: 'debug' }, onLine: (line) => lines.push(line) })

  it('in a log line, an error, a metric or a table', async () => {
    const { tenant, owner: boss } = await academy(app.current)
    const created = await app.current.inject({ method: 'POST', url: '/v1/api-keys', headers: boss.headers, payload: { name: 'n', scopes: ['sms:send', 'sms:read'] } })
    const key = created.json<{ id: number; key: string }>()
    const headers = { authorization: `Bearer ${key.key}` }
    await app.current.inject({ method: 'GET', url: '/v1/sms/history', headers })
    await app.current.inject({ method: 'POST', url: '/v1/sms/send', headers: { ...headers, 'idempotency-key': newKey() }, payload: { title: 't', content: 'c', recipients: recipients(1) } })
    // Refusals: out of scope, and a wrong key of the same lookup id in the path and the header.
    const refused = await app.current.inject({ method: 'GET', url: '/v1/me', headers })
    const wrong = `${key.key.slice(0, 30)}${'x'.repeat(18)}`
    const unknown = await app.current.inject({ method: 'GET', url: `/v1/sms/history?q=${wrong}`, headers: { authorization: `Bearer ${wrong}` } })
    const metrics = (await app.current.inject({ method: 'GET', url: '/metrics' })).body

    const secret = key.key.slice(5)
    const secretOfWrong = wrong.slice(5)
    for (const text of [refused.body, unknown.body, metrics, ...lines]) {
      expect(text).not.toContain(secret)
      expect(text).not.toContain(secretOfWrong)
    }
    // Metrics count by kind only: no key id, no key, no user.
    expect(metrics).toMatch(/svc_http_requests_by_credential_total\{credential="api_key"\} \d+/)
    expect(metrics).not.toMatch(/api_key_id|apiKeyId/)

    const tables = await owner()
      .selectFrom('apiKeys')
      .selectAll()
      .where('tenantId', '=', tenant.id)
      .execute()
    const directory = await owner().selectFrom('apiKeyDirectory').selectAll().where('tenantId', '=', tenant.id).execute()
    const events = await owner().selectFrom('auditEvents').selectAll().where('tenantId', '=', tenant.id).execute()
    const dump = JSON.stringify([tables, directory, events], (_name, value) => (typeof value === 'bigint' ? String(value) : value))
    expect(dump).not.toContain(secret)
    expect(Buffer.concat(tables.map((row) => row.keyHash)).toString('latin1')).not.toContain(secret)
  })
})

describe('requests by credential kind', () => {
  const app = useTestApp()

  it('counts cookie, bearer token and API key requests apart', async () => {
    const { owner: boss } = await academy(app.current)
    const key = await issueKey(app.current, boss, ['sms:read'])
    const count = async (kind: string) => {
      const body = (await app.current.inject({ method: 'GET', url: '/metrics' })).body
      return Number(new RegExp(`svc_http_requests_by_credential_total\\{credential="${kind}"\\} (\\d+)`).exec(body)?.[1] ?? 0)
    }
    const before = { key: await count('api_key'), bearer: await count('bearer_token'), cookie: await count('cookie') }
    await withKey(app.current, key, 'GET', '/v1/sms/history')
    await withKey(app.current, key, 'GET', '/v1/sms/history')
    await app.current.inject({ method: 'GET', url: '/v1/sms/history', cookies: { svc_access_token: boss.headers.authorization.slice(7) } })
    expect(await count('api_key')).toBe(before.key + 2)
    expect(await count('cookie')).toBe(before.cookie + 1)
    // The key's creation and the reads above were by bearer token only where the test used one.
    expect(await count('bearer_token')).toBe(before.bearer)
  })
})

describe('the per-key budget', () => {
  const app = useTestApp({ env: { SVC_API_KEY_PER_MINUTE: '3' } })
  const other = useTestApp({ env: { SVC_API_KEY_PER_MINUTE: '3' } })

  it('answers 429 RATE_LIMITED beyond SVC_API_KEY_PER_MINUTE, across instances, and per key', async () => {
    const { owner: boss } = await academy(app.current)
    const key = await issueKey(app.current, boss, ['sms:read'])
    const second = await issueKey(app.current, boss, ['sms:read'])
    // Keep the test inside one minute window: a window that turns over mid-test gives a fresh budget.
    const secondsLeft = 60 - new Date().getUTCSeconds()
    if (secondsLeft < 5) await new Promise((resolve) => setTimeout(resolve, secondsLeft * 1000 + 200))
    const statuses = [
      (await withKey(app.current, key, 'GET', '/v1/sms/history')).statusCode,
      (await withKey(other.current, key, 'GET', '/v1/sms/history')).statusCode,
      (await withKey(app.current, key, 'GET', '/v1/sms/history')).statusCode,
    ]
    expect(statuses).toEqual([200, 200, 200])
    const over = await withKey(other.current, key, 'GET', '/v1/sms/history')
    expectProblem(over, 429, 'RATE_LIMITED')
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
    expectProblem(await withKey(app.current, key, 'GET', '/v1/sms/history'), 429, 'RATE_LIMITED')
    // Another key of the same tenant, and the owner's own token, keep their budgets.
    expect((await withKey(app.current, second, 'GET', '/v1/sms/history')).statusCode).toBe(200)
    expect((await app.current.inject({ method: 'GET', url: '/v1/sms/history', headers: boss.headers })).statusCode).toBe(200)
  })
})

describe('an unknown key and a wrong key of a known lookup id', () => {
  const app = useTestApp()

  itPostgres('cost the same: one hash, one constant-time comparison, no statement once each id has been seen', async () => {
    const { owner: boss } = await academy(app.current)
    const key = await issueKey(app.current, boss, ['sms:read'])
    const resolver = new ApiKeyResolver(app.current.db, 100)
    const wrong = parseApiKey(`${key.key.slice(0, 21)}${'A'.repeat(27)}`)!
    const unknown = parseApiKey(`svck_${'C'.repeat(43)}`)!
    const real = parseApiKey(key.key)!
    expect(wrong.lookupId).toBe(real.lookupId)
    const now = Date.now()
    // First sight of each lookup id reads the directory.
    expect(await resolver.resolve(real, now)).not.toBeNull()
    expect(await resolver.resolve(unknown, now)).toBeNull()
    const { result, statements } = await recordStatements(async () => [await resolver.resolve(wrong, now), await resolver.resolve(unknown, now)])
    expect(result).toEqual([null, null])
    expect(statements).toEqual([])
  })
})

describe("a key's budget, shared by instances in shares", () => {
  const app = useTestApp()

  /** Waits out the end of the database's minute, so the test runs inside one budget window. */
  async function oneWindow() {
    const secondsLeft = 60 - new Date().getUTCSeconds()
    if (secondsLeft < 5) await new Promise((resolve) => setTimeout(resolve, secondsLeft * 1000 + 200))
  }

  async function admitted(budget: ApiKeyBudget, keyId: number, now: number): Promise<boolean> {
    try {
      await budget.spend(1, keyId, now)
      return true
    } catch (error) {
      expect((error as { code?: string }).code).toBe('RATE_LIMITED')
      return false
    }
  }

  it('asks for the next share while a quarter of the current one is left, before anyone waits for it', async () => {
    await oneWindow()
    const budget = new ApiKeyBudget(app.current.db, 2000) // shares of 100, asked ahead at 25 left
    const keyId = 900_000_000 + Math.floor(Math.random() * 1_000_000)
    const now = Date.now()
    await budget.spend(1, keyId, now) // the first share: 99 left
    const early = await recordStatements(async () => {
      for (let i = 0; i < 74; i++) await budget.spend(1, keyId, now) // 25 left
    })
    expect(early.statements).toEqual([])
    const ahead = await recordStatements(async () => {
      await budget.spend(1, keyId, now) // 24 left: the next share is asked for, and this request does not wait
      await new Promise((resolve) => setTimeout(resolve, 200))
    })
    expect(ahead.statements.filter((statement) => statement.includes('rate_limit_windows'))).toHaveLength(1)
    // The share asked ahead adds to what is left (124): the next is asked for, once, at 24 left again.
    const rest = await recordStatements(async () => {
      for (let i = 0; i < 124; i++) await budget.spend(1, keyId, now)
      await new Promise((resolve) => setTimeout(resolve, 200))
    })
    expect(rest.statements.filter((statement) => statement.includes('rate_limit_windows'))).toHaveLength(1)
  })

  it('admits exactly the budget in a window across two instances asking ahead', async () => {
    await oneWindow()
    const instances = [new ApiKeyBudget(app.current.db, 150), new ApiKeyBudget(app.current.db, 150)] // shares of 7
    const keyId = 800_000_000 + Math.floor(Math.random() * 1_000_000)
    const now = Date.now()
    let admittedCount = 0
    for (let round = 0; round < 200; round++) {
      const results = await Promise.all(instances.map((budget) => admitted(budget, keyId, now)))
      admittedCount += results.filter(Boolean).length
    }
    expect(admittedCount).toBe(150)
  })
})
