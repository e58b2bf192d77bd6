import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prettyLogs } from '../../lib/http/server-options.js'
import { registerOwner } from '../support/auth-fixtures.js'
import { insertPendingMessage, insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { providerSecretHeader } from '../support/fakes/extsms-server.js'
import { testEnv as envFor, useTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'

const WEBHOOK_TOKEN = 'logs-webhook-token'
type Line = Record<string, unknown>

describe('log lines an operator reads', () => {
  let iso: IsolatedDatabase
  const lines: Line[] = []

  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  // After hooks run in reverse: the app closes before its database goes.
  afterAll(async () => {
    await iso?.drop()
  })
  const app = useTestApp(() => ({
    env: { LOG_LEVEL: 'info', DATABASE_URL: iso.url, SVC_SMS_EXTSMS_WEBHOOK_TOKEN: WEBHOOK_TOKEN },
    onLine: (line) => lines.push(JSON.parse(line) as Line),
  }))

  it('keeps probe requests out of the info log', async () => {
    for (const url of ['/actuator/health', '/actuator/health/liveness', '/actuator/health/readiness', '/metrics']) {
      const response = await app.current.inject({ method: 'GET', url, headers: { 'x-request-id': `probe-${url}` } })
      expect(response.statusCode).toBe(200)
    }
    expect(lines.filter((line) => String(line.reqId).startsWith('probe-')).map((line) => line.reqId)).toEqual([])
  })

  it('puts the tenant and the user on the request-completed line of an authenticated request', async () => {
    const owner = await registerOwner(app.current)
    await app.current.inject({ method: 'GET', url: '/v1/me', headers: { ...owner.bearer, 'x-request-id': 'whose-request' } })
    const completed = lines.find((line) => line.reqId === 'whose-request' && line.msg === 'request completed')
    expect(completed).toMatchObject({ tenantId: owner.user!.tenantId, userId: owner.user!.id })
  })

  it('writes one line per dispatch batch with its counts', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    await insertPendingMessage(iso.owner, tenant)
    await insertPendingMessage(iso.owner, tenant)
    expect(await app.current.dispatcher.runOnce()).toBe(2)
    const batches = lines.filter((line) => line.msg === 'dispatch batch')
    expect(batches).toHaveLength(1)
    expect(batches[0]).toMatchObject({ level: 30, claimed: 2, sent: 2, failed: 0 })
    // A pass that found nothing says nothing at info.
    await app.current.dispatcher.runOnce()
    expect(lines.filter((line) => line.msg === 'dispatch batch')).toHaveLength(1)
  })

  it('writes one line per webhook call with the processed and ignored counts', async () => {
    await app.current.inject({
      method: 'POST',
      url: '/v1/sms/solapi/webhook',
      headers: { 'x-provider-secret': providerSecretHeader(WEBHOOK_TOKEN), 'x-request-id': 'webhook-call' },
      payload: [{ bad: 1 }, { bad: 2 }],
    })
    expect(lines.find((line) => line.reqId === 'webhook-call' && line.msg === 'delivery reports applied')).toMatchObject({
      processed: 0,
      ignored: 2,
    })
  })
})

describe('prettyLogs', () => {
  it('is on only for development at a terminal', () => {
    expect(prettyLogs(envFor({ NODE_ENV: 'development' }), true)).toBe(true)
    expect(prettyLogs(envFor({ NODE_ENV: 'development' }), false)).toBe(false)
    expect(prettyLogs(envFor({ NODE_ENV: 'production' }), true)).toBe(false)
    expect(prettyLogs(envFor({ NODE_ENV: 'test' }), true)).toBe(false)
  })
})
