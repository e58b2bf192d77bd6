import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { describe, expect, it } from 'vitest'
import { CORS_PATH_PREFIX, isCorsPath } from '../../lib/http/cors-scope.js'
import { browserSession, expectProblem } from '../support/auth-fixtures.js'
import { owner as ownerDb } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { insertMessageRow } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'

const SPA = 'https://app.example.com'
const DEV_SPA = 'http://localhost:5173'
const EVIL = 'https://evil.test'

/** Origins a browser may send that are not exactly a listed one: each must get no CORS at all. */
const NOT_LISTED = [
  ['an unrelated origin', EVIL],
  ['a listed origin as the prefix of another host', 'https://app.example.com.evil.test'],
  ['a sub-domain of a listed origin', 'https://evil.app.example.com'],
  ['a listed origin over http', 'http://app.example.com'],
  ['a listed origin on another port', 'https://app.example.com:8443'],
  ['a listed dev origin on another port', 'http://localhost:5174'],
  ['the opaque origin null', 'null'],
] as const

function preflight(app: FastifyInstance, url: string, origin: string, method = 'POST', headers = 'content-type') {
  return app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  })
}

const corsHeaderNames = (response: LightMyRequestResponse) =>
  Object.keys(response.headers).filter((name) => name.startsWith('access-control-'))

const listOf = (value: unknown) =>
  String(value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean)

function expectCredentialedCors(response: LightMyRequestResponse, origin: string) {
  expect(response.headers['access-control-allow-origin']).toBe(origin)
  expect(response.headers['access-control-allow-credentials']).toBe('true')
  expect(listOf(response.headers.vary)).toContain('origin')
}

function expectNoCors(response: LightMyRequestResponse) {
  expect(corsHeaderNames(response)).toEqual([])
}

describe('isCorsPath', () => {
  it.each(['/v1', '/v1/me', '/v1/sms/history/12/cancel', '/v1/login?next=/x'])('covers %s', (path) => {
    expect(isCorsPath(path)).toBe(true)
  })

  it.each(['/v1x', '/v10/me', '/actuator/health', '/metrics', '/internal/sms/sender-settings/x/approval', '/docs', '/docs/json', '/', '/x?next=/v1/me'])(
    'leaves out %s',
    (path) => {
      expect(isCorsPath(path)).toBe(false)
    },
  )

  it('is exactly the /v1 API', () => {
    expect(CORS_PATH_PREFIX).toBe('/v1')
  })
})

describe('CORS for the origins listed in SVC_CORS_ORIGINS', () => {
  const app = useTestApp({ env: { SVC_CORS_ORIGINS: `${SPA}, ${DEV_SPA}` } })

  describe('a listed origin', () => {
    it('gets its preflight answered 204 with the methods and headers a client sends', async () => {
      const response = await preflight(app.current, '/v1/sms/send', SPA, 'POST', 'content-type, idempotency-key, x-request-id')
      expect(response.statusCode).toBe(204)
      expect(response.body).toBe('')
      expectCredentialedCors(response, SPA)
      expect(listOf(response.headers['access-control-allow-methods'])).toEqual(
        expect.arrayContaining(['get', 'head', 'post', 'put', 'patch', 'delete']),
      )
      expect(listOf(response.headers['access-control-allow-headers'])).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'idempotency-key', 'x-device-category', 'x-request-id']),
      )
      expect(Number(response.headers['access-control-max-age'])).toBeGreaterThan(0)
    })

    it.each(['/v1/login', '/v1/refresh', '/v1/me', '/v1/me/sessions/abc', '/v1/logout-all'])(
      'gets a preflight on %s before any authentication is asked for',
      async (url) => {
        const response = await preflight(app.current, url, DEV_SPA, 'DELETE')
        expect(response.statusCode).toBe(204)
        expectCredentialedCors(response, DEV_SPA)
      },
    )

    it('reads GET /v1/me with its cookie, and may read the headers a client needs', async () => {
      const session = await browserSession(app.current)
      const response = await app.current.inject({ method: 'GET', url: '/v1/me', cookies: session.access, headers: { origin: SPA } })
      expect(response.statusCode).toBe(200)
      expectCredentialedCors(response, SPA)
      expect(listOf(response.headers['access-control-expose-headers'])).toEqual(
        expect.arrayContaining(['x-request-id', 'retry-after', 'idempotent-replayed']),
      )
    })

    it('sends PATCH /v1/me and POST /v1/refresh with its cookies and gets the headers on the answers', async () => {
      const session = await browserSession(app.current)
      const patched = await app.current.inject({ method: 'PATCH', url: '/v1/me', cookies: session.access, headers: { origin: SPA }, payload: { name: 'Changed' } })
      expect(patched.statusCode).toBe(200)
      expectCredentialedCors(patched, SPA)
      const refreshed = await app.current.inject({ method: 'POST', url: '/v1/refresh', cookies: session.refresh, headers: { origin: SPA } })
      expect(refreshed.statusCode).toBe(200)
      expectCredentialedCors(refreshed, SPA)
    })

    it('can read a refusal: the 401 of a signed-out page and a 404 carry the headers too', async () => {
      const signedOut = await app.current.inject({ method: 'GET', url: '/v1/me', headers: { origin: SPA } })
      expectProblem(signedOut, 401, 'AUTH_002')
      expectCredentialedCors(signedOut, SPA)
      const unknown = await app.current.inject({ method: 'GET', url: '/v1/no-such-route', headers: { origin: SPA } })
      expectProblem(unknown, 404, 'NOT_FOUND')
      expectCredentialedCors(unknown, SPA)
    })

    it('gets 404 problem+json, without CORS, for an OPTIONS that is not a preflight (no Access-Control-Request-Method)', async () => {
      const response = await app.current.inject({ method: 'OPTIONS', url: '/v1/me', headers: { origin: SPA } })
      expectProblem(response, 404, 'NOT_FOUND')
      expectNoCors(response)
    })

    it.each([
      ['GET', '/actuator/health/liveness'],
      ['GET', '/metrics'],
      ['GET', '/actuator/health'],
    ])('gets no CORS on %s %s, which is not the /v1 API', async (method, url) => {
      const response = await app.current.inject({ method: method as InjectOptions['method'], url, headers: { origin: SPA } })
      expect(response.statusCode).toBe(200)
      expectNoCors(response)
    })

    it.each([
      ['PUT', '/actuator/health', ['GET', 'HEAD']],
      ['GET', '/v1/login', ['POST']],
    ] as const)('is not told by a 405 on %s %s that OPTIONS is a method of the path', async (method, url, allowed) => {
      const response = await app.current.inject({ method, url, headers: { origin: SPA } })
      expectProblem(response, 405, 'METHOD_NOT_ALLOWED')
      expect(listOf(response.headers.allow)).toEqual(allowed.map((name) => name.toLowerCase()))
    })

    it.each(['/actuator/health', '/metrics', '/internal/sms/sender-settings/x/approval', '/docs/json'])(
      'gets its preflight to %s answered 404 problem+json without CORS',
      async (url) => {
        const response = await preflight(app.current, url, SPA)
        expectProblem(response, 404, 'NOT_FOUND')
        expectNoCors(response)
      },
    )
  })

  describe('an origin that is not listed', () => {
    it.each(NOT_LISTED)('gets no CORS header on an answer, for %s', async (_case, origin) => {
      const session = await browserSession(app.current)
      const response = await app.current.inject({ method: 'GET', url: '/v1/me', cookies: session.access, headers: { origin } })
      // A safe method is answered (the browser keeps the answer from the page); nothing in it lets the page read it.
      expect(response.statusCode).toBe(200)
      expectNoCors(response)
    })

    it.each(NOT_LISTED)('gets its preflight answered 404 problem+json without CORS, for %s', async (_case, origin) => {
      const response = await preflight(app.current, '/v1/me', origin, 'PATCH')
      expectProblem(response, 404, 'NOT_FOUND')
      expectNoCors(response)
    })

    it('is still refused a cookie-authenticated logout-all with 403 CSRF_ORIGIN_REJECTED, and the session goes on', async () => {
      const session = await browserSession(app.current)
      const refused = await app.current.inject({ method: 'POST', url: '/v1/logout-all', cookies: session.access, headers: { origin: EVIL } })
      expectProblem(refused, 403, 'CSRF_ORIGIN_REJECTED')
      expectNoCors(refused)
      expect((await app.current.inject({ method: 'GET', url: '/v1/me', cookies: session.access })).statusCode).toBe(200)
    })

    it('is still refused a cookie-authenticated cancel, and the scheduled message stays PENDING', async () => {
      const { tenant, owner } = await academy(app.current)
      const id = await insertMessageRow(owner, { scheduledAt: new Date(Date.now() + 3_600_000) })
      const cookies = { svc_access_token: owner.headers.authorization.replace('Bearer ', '') }
      const refused = await app.current.inject({
        method: 'POST',
        url: `/v1/sms/history/${id}/cancel`,
        cookies,
        headers: { origin: 'https://app.example.com.evil.test' },
      })
      expectProblem(refused, 403, 'CSRF_ORIGIN_REJECTED')
      expectNoCors(refused)
      const row = await ownerDb().selectFrom('smsMessages').select('status').where('tenantId', '=', tenant.id).where('id', '=', id).executeTakeFirstOrThrow()
      expect(row.status).toBe('PENDING')
    })
  })
})

describe('CORS with SVC_CORS_ORIGINS empty (the default)', () => {
  const app = useTestApp()

  it.each([SPA, DEV_SPA, EVIL])('sends no CORS header to %s on any answer', async (origin) => {
    const session = await browserSession(app.current)
    const answers = await Promise.all([
      app.current.inject({ method: 'GET', url: '/v1/me', cookies: session.access, headers: { origin } }),
      app.current.inject({ method: 'GET', url: '/v1/me', headers: { origin } }),
      app.current.inject({ method: 'GET', url: '/actuator/health/liveness', headers: { origin } }),
    ])
    expect(answers.map((response) => response.statusCode)).toEqual([200, 401, 200])
    for (const response of answers) expectNoCors(response)
  })

  it.each([SPA, EVIL])('answers a preflight from %s with 404 problem+json', async (origin) => {
    const response = await preflight(app.current, '/v1/login', origin)
    expectProblem(response, 404, 'NOT_FOUND')
    expectNoCors(response)
  })
})
