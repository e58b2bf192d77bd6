import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDispatcher } from '../../lib/dispatch/dispatcher.js'
import type { SmsProvider } from '../../lib/dispatch/providers/provider.js'
import { login, refresh, registerOwner } from '../support/auth-fixtures.js'
import { insertPendingMessage, insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { providerSecretHeader } from '../support/fakes/extsms-server.js'
import { buildTestApp, useTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'

const WEBHOOK_TOKEN = 'metrics-webhook-token'

/** The value of one series in Prometheus text (`name{labels} value`), 0 when the series is not there yet. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

describe('GET /metrics, an advertisement in the quiet hours', () => {
  let iso: IsolatedDatabase
  // 23:00 and 10:00 in Asia/Seoul (UTC+9), the default SVC_TIME_ZONE.
  const night = () => new Date('2026-11-28T14:00:00Z')
  const day = () => new Date('2026-11-29T01:00:00Z')

  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso.drop()
  })

  it('counts it as due by day and as merely pending at night, so the oldest-due age does not climb all night', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    const smsId = await insertPendingMessage(iso.owner, { ...tenant, nextAttemptAt: new Date(Date.now() - 60_000) })
    await iso.owner
      .updateTable('smsMessages')
      .set({ purpose: 'ADVERTISEMENT', adSenderName: 'Academy', adOptOutNumber: '0801234567' })
      .where('id', '=', smsId)
      .execute()
    const scrapeAt = async (clock: () => Date) => {
      const app = await buildTestApp({ DATABASE_URL: iso.url, SVC_SMS_DISPATCHER: 'off' }, clock)
      try {
        return (await app.inject({ method: 'GET', url: '/metrics' })).body
      } finally {
        await app.close()
      }
    }
    const atNight = await scrapeAt(night)
    expect(sample(atNight, 'svc_sms_messages{status="PENDING"}')).toBe(1)
    expect(sample(atNight, 'svc_sms_due_backlog')).toBe(0)
    expect(sample(atNight, 'svc_sms_oldest_due_age_seconds')).toBe(0)
    const byDay = await scrapeAt(day)
    expect(sample(byDay, 'svc_sms_due_backlog')).toBe(1)
    expect(sample(byDay, 'svc_sms_oldest_due_age_seconds')).toBeGreaterThanOrEqual(59)
  })
})

describe('GET /metrics', () => {
  let iso: IsolatedDatabase

  beforeAll(async () => {
    // Dispatch works across tenants: its own database, so other files' messages are not in the counts.
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso.drop()
  })
  const app = useTestApp(() => ({ env: { DATABASE_URL: iso.url, SVC_SMS_EXTSMS_WEBHOOK_TOKEN: WEBHOOK_TOKEN } }))

  const scrape = async () => {
    const response = await app.current.inject({ method: 'GET', url: '/metrics' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    return response.body
  }

  it('moves the login, dispatch, webhook, HTTP and database series as the service works', async () => {
    const before = await scrape()
    expect(before).toContain('nodejs_eventloop_lag_seconds')

    const owner = await registerOwner(app.current)
    expect((await login(app.current, { userLoginId: owner.loginId, password: owner.password })).response.statusCode).toBe(200)
    expect((await login(app.current, { userLoginId: owner.loginId, password: 'not-the-password-1A!' })).response.statusCode).toBe(401)

    const tenant = await insertTenantAndSender(iso.owner)
    await insertPendingMessage(iso.owner, { ...tenant, nextAttemptAt: new Date(Date.now() - 60_000) })
    const waiting = await scrape()
    expect(sample(waiting, 'svc_sms_due_backlog')).toBe(1)
    expect(sample(waiting, 'svc_sms_oldest_due_age_seconds')).toBeGreaterThanOrEqual(59)
    expect(sample(waiting, 'svc_sms_messages{status="PENDING"}')).toBe(1)

    expect(await app.current.dispatcher.runOnce()).toBe(1)
    const webhook = await app.current.inject({
      method: 'POST',
      url: '/v1/sms/solapi/webhook',
      headers: { 'x-provider-secret': providerSecretHeader(WEBHOOK_TOKEN) },
      payload: [{ not: 'a report' }],
    })
    expect(webhook.json()).toEqual({ processed: 0, ignored: 1 })

    const after = await scrape()
    expect(sample(after, 'svc_auth_logins_total{outcome="ok"}') - sample(before, 'svc_auth_logins_total{outcome="ok"}')).toBe(1)
    expect(sample(after, 'svc_auth_logins_total{outcome="invalid"}') - sample(before, 'svc_auth_logins_total{outcome="invalid"}')).toBe(1)
    expect(sample(after, 'svc_sms_provider_calls_total{outcome="accepted"}')).toBe(1)
    expect(sample(after, 'svc_sms_provider_call_duration_seconds_count{outcome="accepted"}')).toBe(1)
    expect(sample(after, 'svc_sms_delivery_reports_total{result="ignored"}')).toBe(1)
    expect(sample(after, 'svc_sms_due_backlog')).toBe(0)
    expect(sample(after, 'svc_sms_messages{status="PENDING"}')).toBe(0)
    // The route pattern and the status class, never the URL.
    expect(sample(after, 'svc_http_request_duration_seconds_count{method="POST",route="/v1/login",status_class="2xx"}')).toBe(1)
    expect(sample(after, 'svc_http_request_duration_seconds_count{method="POST",route="/v1/login",status_class="4xx"}')).toBe(1)
    expect(after).toMatch(/^svc_db_pool_connections\{state="idle"\} \d+$/m)
    expect(after).toMatch(/^svc_db_pool_waiting_requests \d+$/m)
  })

  it('counts a retryable provider answer as a call and a retry', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    await insertPendingMessage(iso.owner, tenant)
    const before = await scrape()
    const unavailable = async () => ({ kind: 'retryable' as const, error: 'provider busy' })
    const busy: SmsProvider = {
      name: 'extsms',
      callTimeoutMs: 0,
      createGroup: unavailable,
      addMessages: unavailable,
      sendGroup: unavailable,
      readGroup: unavailable,
    }
    const dispatcher = createDispatcher({
      db: app.current.db,
      provider: busy,
      log: app.current.log,
      batchSize: 10,
      maxAttempts: 3,
      retryBaseSeconds: 30,
      metrics: app.current.metrics,
    })
    expect(await dispatcher.runOnce()).toBe(1)
    const after = await scrape()
    const moved = (series: string) => sample(after, series) - sample(before, series)
    expect(moved('svc_sms_provider_calls_total{outcome="retryable"}')).toBe(1)
    expect(moved('svc_sms_retries_total')).toBe(1)
    expect(sample(after, 'svc_sms_messages{status="PENDING"}')).toBe(1)
    // Retried later, so not due now.
    expect(sample(after, 'svc_sms_due_backlog')).toBe(0)
  })

  it('labels unknown paths as one series, never by URL', async () => {
    await app.current.inject({ method: 'GET', url: '/no/such/path/12345' })
    const text = await scrape()
    expect(text).not.toContain('/no/such/path')
    expect(sample(text, 'svc_http_request_duration_seconds_count{method="GET",route="unmatched",status_class="4xx"}')).toBeGreaterThanOrEqual(1)
  })
})

describe('auth metrics', () => {
  const app = useTestApp({ env: { SVC_LOGIN_MAX_FAILURES: '2', SVC_REFRESH_REUSE_GRACE_SECONDS: '0' } })

  const scrape = async () => (await app.current.inject({ method: 'GET', url: '/metrics' })).body

  it('counts a lockout and a refresh reuse', async () => {
    const owner = await registerOwner(app.current)
    const before = await scrape()
    const wrong = { userLoginId: owner.loginId, password: 'not-the-password-1A!' }
    for (let attempt = 0; attempt < 2; attempt++) expect((await login(app.current, wrong)).response.statusCode).toBe(401)
    expect((await login(app.current, wrong)).response.statusCode).toBe(429)
    expect((await refresh(app.current, owner.refreshToken)).response.statusCode).toBe(200)
    expect((await refresh(app.current, owner.refreshToken)).response.statusCode).toBe(401)
    const after = await scrape()
    const moved = (series: string) => sample(after, series) - sample(before, series)
    expect(moved('svc_auth_logins_total{outcome="invalid"}')).toBe(2)
    expect(moved('svc_auth_logins_total{outcome="locked"}')).toBe(1)
    expect(moved('svc_auth_lockouts_total')).toBe(1)
    expect(moved('svc_auth_refresh_reuse_total')).toBe(1)
  })
})

describe('GET /metrics with SVC_METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789'
  const app = useTestApp({ env: { SVC_METRICS_TOKEN: token } })

  it('answers 401 problem+json without the bearer token', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }]) {
      const response = await app.current.inject({ method: 'GET', url: '/metrics', headers })
      expect(response.statusCode).toBe(401)
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(response.headers['www-authenticate']).toBe('Bearer')
      expect(response.json()).toMatchObject({ status: 401, code: 'AUTH_002' })
    }
  })

  it('answers the metrics with the bearer token', async () => {
    const response = await app.current.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } })
    expect(response.statusCode).toBe(200)
    expect(response.body).toContain('svc_http_request_duration_seconds')
  })
})

describe('GET /metrics with SVC_METRICS=off', () => {
  const app = useTestApp({ env: { SVC_METRICS: 'off' } })

  it('is not there, and the service still counts nothing without failing', async () => {
    const response = await app.current.inject({ method: 'GET', url: '/metrics' })
    expect(response.statusCode).toBe(404)
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
  })
})
