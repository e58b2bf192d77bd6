import type { InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { browserSession, expectProblem } from '../support/auth-fixtures.js'
import { configProblems } from '../support/config-problems.js'
import { owner as ownerDb } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { insertMessageRow } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'

const EVIL = 'https://evil.example'
const FRONTEND = 'https://app.academy.example'

describe('CSRF: cookie-authenticated unsafe requests from another origin', () => {
  const app = useTestApp({ env: { SVC_CORS_ORIGINS: `${FRONTEND}, http://localhost:5173` } })

  const me = (cookies: Record<string, string>) => app.current.inject({ method: 'GET', url: '/v1/me', cookies })

  it('refuses a bodiless cancel from https://evil.example with 403 CSRF_ORIGIN_REJECTED, and the message stays PENDING', async () => {
    const { tenant, owner } = await academy(app.current)
    const id = await insertMessageRow(owner, { scheduledAt: new Date(Date.now() + 3_600_000) })
    const cookie = { svc_access_token: owner.headers.authorization.replace('Bearer ', '') }
    const response = await app.current.inject({ method: 'POST', url: `/v1/sms/history/${id}/cancel`, cookies: cookie, headers: { origin: EVIL } })
    expectProblem(response, 403, 'CSRF_ORIGIN_REJECTED')
    const row = await ownerDb().selectFrom('smsMessages').select('status').where('tenantId', '=', tenant.id).where('id', '=', id).executeTakeFirstOrThrow()
    expect(row.status).toBe('PENDING')
  })

  it('refuses logout-all from another origin, and the session goes on', async () => {
    const session = await browserSession(app.current)
    expectProblem(await app.current.inject({ method: 'POST', url: '/v1/logout-all', cookies: session.access, headers: { origin: EVIL } }), 403, 'CSRF_ORIGIN_REJECTED')
    expectProblem(await app.current.inject({ method: 'POST', url: '/v1/logout', cookies: session.access, headers: { origin: EVIL } }), 403, 'CSRF_ORIGIN_REJECTED')
    expect((await me(session.access)).statusCode).toBe(200)
  })

  it('refuses a refresh by cookie from another origin, and the refresh token is not rotated', async () => {
    const session = await browserSession(app.current)
    expectProblem(await app.current.inject({ method: 'POST', url: '/v1/refresh', cookies: session.refresh, headers: { origin: EVIL } }), 403, 'CSRF_ORIGIN_REJECTED')
    expect((await app.current.inject({ method: 'POST', url: '/v1/refresh', cookies: session.refresh })).statusCode).toBe(200)
  })

  it('refuses a request without Origin that the browser marks Sec-Fetch-Site: cross-site', async () => {
    const session = await browserSession(app.current)
    const response = await app.current.inject({ method: 'POST', url: '/v1/logout-all', cookies: session.access, headers: { 'sec-fetch-site': 'cross-site' } })
    expectProblem(response, 403, 'CSRF_ORIGIN_REJECTED')
    expect((await me(session.access)).statusCode).toBe(200)
  })

  it.each([
    ['the opaque origin null', 'null'],
    ['a listed origin on another port', 'https://app.academy.example:8443'],
    ['a listed origin over http', 'http://app.academy.example'],
    ['a sub-domain of a listed origin', 'https://evil.app.academy.example'],
  ])('refuses %s', async (_case, origin) => {
    const session = await browserSession(app.current)
    expectProblem(await app.current.inject({ method: 'PATCH', url: '/v1/me', cookies: session.access, headers: { origin }, payload: { name: 'Mallory' } }), 403, 'CSRF_ORIGIN_REJECTED')
  })

  it.each([
    ['its own origin', { origin: 'http://localhost' }],
    ['its own origin with the port spelt out', { origin: 'http://localhost:80' }],
    ['an origin listed in SVC_CORS_ORIGINS', { origin: FRONTEND }],
    ['another listed origin', { origin: 'http://localhost:5173' }],
    ['no Origin and no Sec-Fetch-Site (curl, mobile)', {}],
    ['Sec-Fetch-Site same-origin without Origin', { 'sec-fetch-site': 'same-origin' }],
  ])('accepts a cookie-authenticated change from %s', async (_case, headers: Record<string, string>) => {
    const session = await browserSession(app.current)
    const response = await app.current.inject({ method: 'PATCH', url: '/v1/me', cookies: session.access, headers, payload: { name: 'Changed' } })
    expect(response.statusCode).toBe(200)
  })

  it('leaves bearer-authenticated requests alone, whatever their Origin', async () => {
    const { owner } = await academy(app.current)
    const id = await insertMessageRow(owner, { scheduledAt: new Date(Date.now() + 3_600_000) })
    const response = await app.current.inject({ method: 'POST', url: `/v1/sms/history/${id}/cancel`, headers: { ...owner.headers, origin: EVIL } })
    expect(response.statusCode).toBe(200)
  })

  it('leaves safe methods alone', async () => {
    const session = await browserSession(app.current)
    const request: InjectOptions = { method: 'GET', url: '/v1/me', cookies: session.access, headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' } }
    expect((await app.current.inject(request)).statusCode).toBe(200)
  })
})

describe('CSRF: the own origin behind a trusted proxy', () => {
  const app = useTestApp({ env: { SVC_TRUST_PROXY: '10.77.0.0/16' } })

  const forwarded = { host: 'svc.internal:8080', 'x-forwarded-host': 'api.academy.example', 'x-forwarded-proto': 'https', origin: 'https://api.academy.example' }

  it('takes the public origin from X-Forwarded-Proto and X-Forwarded-Host sent by a trusted proxy', async () => {
    const session = await browserSession(app.current)
    const response = await app.current.inject({ method: 'PATCH', url: '/v1/me', remoteAddress: '10.77.1.2', cookies: session.access, headers: forwarded, payload: { name: 'Changed' } })
    expect(response.statusCode).toBe(200)
  })

  it('ignores those headers from a peer that is not a trusted proxy', async () => {
    const session = await browserSession(app.current)
    const response = await app.current.inject({ method: 'PATCH', url: '/v1/me', remoteAddress: '192.0.2.9', cookies: session.access, headers: forwarded, payload: { name: 'Changed' } })
    expectProblem(response, 403, 'CSRF_ORIGIN_REJECTED')
  })
})

describe('SVC_CORS_ORIGINS configuration', () => {
  const problemsOf = (value: string) => configProblems({ SVC_CORS_ORIGINS: value })

  it.each(['', 'https://app.example', 'https://app.example, http://localhost:5173'])('accepts %j', (value) => {
    expect(problemsOf(value)).toEqual([])
  })

  it.each(['app.example', 'https://app.example/', 'https://app.example/path', '*', 'https://*.example', 'ftp://app.example'])(
    'refuses %j (an origin is exactly scheme://host[:port])',
    (value) => {
      expect(problemsOf(value)).toEqual([expect.stringMatching(/^SVC_CORS_ORIGINS: /)])
    },
  )
})
