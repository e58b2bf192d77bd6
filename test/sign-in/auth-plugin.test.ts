import { Type } from '@sinclair/typebox'
import { createHmac } from 'node:crypto'
import { sql } from 'kysely'
import net from 'node:net'
import pg from 'pg'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Role } from '../../db/schema.js'
import { AUTH_SKIP_PREFIXES, isAuthSkipped } from '../../lib/sign-in/skip-paths.js'
import { AppError } from '../../lib/errors.js'
import { decodeJwt, expectProblem, insertUserWithPassword, login, signJwt } from '../support/auth-fixtures.js'
import { createTenant, insertUser, owner } from '../support/fixtures.js'
import { TEST_JWT_SECRET, buildAppWith, itPipelined, useTestApp } from '../support/helper.js'
import { recordQueries, RUNTIME_ROLE, RUNTIME_TIMEOUT, statementsOf } from '../support/statement-recorder.js'

describe('isAuthSkipped', () => {
  it.each(AUTH_SKIP_PREFIXES.flatMap((prefix) => [prefix, `${prefix}/`, `${prefix}/deeper/path`, `${prefix}?x=1`, `${prefix}/x?next=/v1/me`]))(
    'skips %s',
    (path) => {
      expect(isAuthSkipped(path)).toBe(true)
    },
  )

  it.each([
    ...AUTH_SKIP_PREFIXES.map((prefix) => `${prefix}x`),
    ...AUTH_SKIP_PREFIXES.map((prefix) => `${prefix}-all`),
    '/v1/logout',
    '/v1/logout-all',
    '/v1/me',
    '/v1/me/sessions?next=/v1/login',
    '/v1',
    '/',
    '/V1/LOGIN',
    '/api/v1/login',
    '/x/actuator',
  ])('does not skip %s', (path) => {
    expect(isAuthSkipped(path)).toBe(false)
  })

  it('lists exactly the prefixes that never read a token', () => {
    expect([...AUTH_SKIP_PREFIXES].sort()).toEqual(['/actuator', '/v1/login', '/v1/oauth2', '/v1/password', '/v1/refresh', '/v1/register'])
  })
})

describe('auth plugin', () => {
  /** Statements sent to PostgreSQL while `recording`; read by the probe route when its handler starts. */
  const statements: string[] = []
  let recording = false
  let seenByHandler: string[] = []

  const app = useTestApp(() => ({ extend: async (test) => {
      test.get('/test/whoami', { config: { access: 'user' } }, async (request) => {
        const { rows } = await sql<{ tenant: string }>`select current_setting('app.tenant_id', true) as tenant`.execute(request.db)
        const identity = request.caller
        return {
          identity: { ...identity, accessExpiresAt: identity.accessExpiresAt.toISOString() },
          requestTenantId: request.tenantId,
          databaseTenant: rows[0]!.tenant,
        }
      })
      for (const prefix of AUTH_SKIP_PREFIXES) {
        test.get(`${prefix}/test-whoami`, { config: { access: 'public' } }, async (request) => ({ identity: request.identity }))
        test.get(`${prefix}x-test-whoami`, { config: { access: 'user' } }, async (request) => ({ userId: request.identity?.userId ?? null }))
      }
      test.get('/test/owner-only', { config: { access: 'owner' } }, async () => ({ ok: true }))
      test.get('/test/managers', { config: { access: { roles: ['OWNER', 'MANAGER'] } } }, async () => ({ ok: true }))
      test.get('/test/public-caller', { config: { access: 'public' } }, async (request) => ({ userId: request.caller.userId }))
      test.get('/test/staff/area', { config: { access: 'staff' } }, async () => ({ ok: true }))
      test.get('/test/staff/public', { config: { access: 'public' } }, async () => ({ ok: true }))
      test.get(
        '/test/users/:id',
        { config: { access: 'user' }, schema: { params: Type.Object({ id: Type.Integer() }) } },
        async (request) => {
          const { id } = request.params as { id: number }
          const user = await request.db.selectFrom('users').select(['id', 'tenantId']).where('id', '=', id).executeTakeFirst()
          return { user: user ?? null }
        },
      )
      test.get('/test/users', { config: { access: 'user' } }, async (request) => {
        const rows = await request.db.selectFrom('users').select('tenantId').distinct().execute()
        return { tenantIds: rows.map((row) => row.tenantId) }
      })
      test.get('/test/statements', { config: { access: 'user' } }, async (request) => {
        seenByHandler = [...statements]
        await sql`select ${1}::int as probe`.execute(request.db)
        return { ok: true }
      })
      test.post('/test/rename', { config: { access: 'user' } }, async (request) => {
        await request.db.updateTable('users').set({ name: 'renamed by a revoked token' }).where('id', '=', request.caller.userId).execute()
        return { ok: true }
      })
      test.get('/test/rename-on-get', { config: { access: 'user' } }, async (request) => {
        await request.db.updateTable('users').set({ name: 'renamed by a GET' }).where('id', '=', request.caller.userId).execute()
        return { ok: true }
      })
      test.get('/test/no-statement', { config: { access: 'user' } }, async () => ({ ok: true }))
      test.get('/test/fails-first', { config: { access: 'user' } }, async () => {
        throw new AppError('NOT_FOUND')
      })
    } }))
  afterEach(() => {
    vi.restoreAllMocks()
  })

  async function signedIn(role: Role = 'STUDENT', tenant?: { id: number; customId: string; slug: string }) {
    const home = tenant ?? (await createTenant())
    const user = await insertUserWithPassword(home, { role })
    const result = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: home.customId })
    expect(result.response.statusCode).toBe(200)
    return { ...result, tenant: home, user }
  }

  const whoami = (headers: Record<string, string> = {}, cookies: Record<string, string> = {}) =>
    app.current.inject({ method: 'GET', url: '/test/whoami', headers, cookies })

  describe('identity on the request', () => {
    it('derives user id, tenant slug, tenant id, role and ROLE_<role> from the token, and binds the tenant', async () => {
      const { accessToken, bearer, tenant, user } = await signedIn('MANAGER')
      const response = await whoami(bearer)
      expect(response.statusCode).toBe(200)
      const claims = decodeJwt(accessToken)
      expect(response.json()).toEqual({
        identity: {
          userId: user.id,
          tenantSlug: tenant.slug,
          tenantId: tenant.id,
          role: 'MANAGER',
          authority: 'ROLE_MANAGER',
          sid: claims.sid,
          jti: claims.jti,
          accessExpiresAt: new Date((claims.exp as number) * 1000).toISOString(),
          apiKeyId: null,
        },
        requestTenantId: tenant.id,
        databaseTenant: String(tenant.id),
      })
    })

    it.each(['OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT'] as Role[])('gives a %s the authority ROLE_%s', async (role) => {
      const { bearer } = await signedIn(role)
      expect((await whoami(bearer)).json().identity.authority).toBe(`ROLE_${role}`)
    })

    it('answers INTERNAL_ERROR when a handler reads request.caller on a route that reads no token', async () => {
      const { bearer } = await signedIn()
      const response = await app.current.inject({ method: 'GET', url: '/test/public-caller', headers: bearer })
      expectProblem(response, 500, 'INTERNAL_ERROR')
    })
  })

  describe('where the token comes from', () => {
    it('accepts the access cookie when there is no Authorization header', async () => {
      const { accessToken, user } = await signedIn()
      const response = await whoami({}, { svc_access_token: accessToken })
      expect(response.json().identity.userId).toBe(user.id)
    })

    it('prefers the bearer header over the cookie', async () => {
      const first = await signedIn()
      const second = await signedIn()
      const response = await whoami(first.bearer, { svc_access_token: second.accessToken })
      expect(response.json().identity.userId).toBe(first.user.id)
    })

    it('does not fall back to a valid cookie when the bearer token is bad', async () => {
      const { accessToken } = await signedIn()
      expectProblem(await whoami({ authorization: 'Bearer not-a-jwt' }, { svc_access_token: accessToken }), 401, 'AUTH_003')
    })

    it('accepts the scheme name in any case', async () => {
      const { accessToken, user } = await signedIn()
      expect((await whoami({ authorization: `bearer ${accessToken}` })).json().identity.userId).toBe(user.id)
    })
  })

  describe('rejections', () => {
    it.each([
      ['no credentials at all', {}],
      ['an empty bearer header', { authorization: 'Bearer ' }],
      ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ])('answers AUTH_002 with %s', async (_case, headers) => {
      expectProblem(await whoami(headers as Record<string, string>), 401, 'AUTH_002')
    })

    it('answers AUTH_002 for an empty access cookie', async () => {
      expectProblem(await whoami({}, { svc_access_token: '' }), 401, 'AUTH_002')
    })

    const forgeries: Array<[string, (token: string, refresh: string) => string]> = [
      ['garbage', () => 'garbage'],
      ['three empty segments', () => '..'],
      ['a truncated signature', (token) => token.slice(0, -4)],
      ['a signature by another key', (token) => signJwt(decodeJwt(token), { secret: 'another-secret-that-is-at-least-32-bytes' })],
      ['another issuer', (token) => signJwt({ ...decodeJwt(token), iss: 'evil-issuer' })],
      ['no issuer', (token) => signJwt({ ...decodeJwt(token), iss: undefined })],
      ['type refresh (a refresh token)', (_token, refresh) => refresh],
      ['no type', (token) => signJwt({ ...decodeJwt(token), type: undefined })],
      ['an expiry in the past', (token) => signJwt({ ...decodeJwt(token), iat: 1_600_000_000, exp: 1_600_000_600 })],
      ['no expiry', (token) => signJwt({ ...decodeJwt(token), exp: undefined })],
      ['no issued-at', (token) => signJwt({ ...decodeJwt(token), iat: undefined })],
      ['no sid', (token) => signJwt({ ...decodeJwt(token), sid: undefined })],
      ['a non-numeric subject', (token) => signJwt({ ...decodeJwt(token), sub: 'admin' })],
      ['an unknown role', (token) => signJwt({ ...decodeJwt(token), role: 'ADMIN' })],
      ['a string tenant id', (token) => signJwt({ ...decodeJwt(token), tenant_id: String(decodeJwt(token).tenant_id) })],
      ['alg none', (token) => `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${token.split('.')[1]}.`],
      [
        'alg HS512 with the right secret',
        (token) => {
          const header = Buffer.from('{"alg":"HS512","typ":"JWT"}').toString('base64url')
          const payload = token.split('.')[1]
          // Signed properly with HS512 so only the algorithm restriction can refuse it.
          return `${header}.${payload}.${createHmac('sha512', TEST_JWT_SECRET).update(`${header}.${payload}`).digest('base64url')}`
        },
      ],
    ]

    it.each(forgeries)('answers AUTH_003 for a token with %s', async (_case, forge) => {
      const { accessToken, refreshToken } = await signedIn()
      expectProblem(await whoami({ authorization: `Bearer ${forge(accessToken, refreshToken)}` }), 401, 'AUTH_003')
    })

    it('accepts a well-formed token signed with the secret (the forgeries differ only in the named flaw)', async () => {
      const { accessToken, user } = await signedIn()
      const resigned = signJwt(decodeJwt(accessToken))
      expect((await whoami({ authorization: `Bearer ${resigned}` })).json().identity.userId).toBe(user.id)
    })

    it('answers AUTH_004 for a blacklisted access token, before the handler runs', async () => {
      const { bearer } = await signedIn()
      expect((await app.current.inject({ method: 'POST', url: '/v1/logout', headers: bearer })).statusCode).toBe(204)
      expectProblem(await whoami(bearer), 401, 'AUTH_004')
    })
  })

  describe('skip prefixes', () => {
    it.each(AUTH_SKIP_PREFIXES)('never reads a token on a public route under %s, not even a valid one', async (prefix) => {
      const { bearer } = await signedIn()
      const withValid = await app.current.inject({ method: 'GET', url: `${prefix}/test-whoami`, headers: bearer })
      expect(withValid.statusCode).toBe(200)
      expect(withValid.json()).toEqual({ identity: null })
      const withGarbage = await app.current.inject({ method: 'GET', url: `${prefix}/test-whoami`, headers: { authorization: 'Bearer garbage' } })
      expect(withGarbage.statusCode).toBe(200)
    })

    it.each(AUTH_SKIP_PREFIXES)('refuses to start with a route under %s that reads an access token', async (prefix) => {
      const started = buildAppWith(async (test) => {
        test.get(`${prefix}/test-reads-token`, { config: { access: 'user' } }, async () => ({ ok: true }))
      })
      await expect(started).rejects.toThrow(`GET ${prefix}/test-reads-token: reads an access token under a skipped prefix`)
    })

    it.each(AUTH_SKIP_PREFIXES)('authenticates a path that only starts with the letters of %s', async (prefix) => {
      expectProblem(await app.current.inject({ method: 'GET', url: `${prefix}x-test-whoami` }), 401, 'AUTH_002')
      const { bearer, user } = await signedIn()
      const response = await app.current.inject({ method: 'GET', url: `${prefix}x-test-whoami`, headers: bearer })
      expect(response.json()).toEqual({ userId: user.id })
    })

    it.each([
      ['POST', '/v1/login', 400, 'VALIDATION_FAILED'],
      ['POST', '/v1/register', 400, 'VALIDATION_FAILED'],
      ['POST', '/v1/register/owner', 400, 'VALIDATION_FAILED'],
      ['POST', '/v1/refresh', 401, 'AUTH_005'],
      ['GET', '/v1/oauth2/authorization/google', 404, 'NOT_FOUND'],
    ] as const)('lets %s %s answer for itself despite a bad token', async (method, url, status, code) => {
      const response = await app.current.inject({
        method,
        url,
        headers: { authorization: 'Bearer garbage' },
        cookies: { svc_access_token: 'garbage' },
        ...(method === 'POST' && url !== '/v1/refresh' ? { payload: {} } : {}),
      })
      expectProblem(response, status, code)
    })

    it('answers GET /actuator/health despite a bad token', async () => {
      const response = await app.current.inject({ method: 'GET', url: '/actuator/health', headers: { authorization: 'Bearer garbage' } })
      expect(response.statusCode).toBe(200)
    })
  })

  describe('role guards', () => {
    it.each([
      ['OWNER', 200],
      ['MANAGER', 200],
      ['INSTRUCTOR', 403],
      ['STUDENT', 403],
    ] as const)('guards a route of access { roles: [OWNER, MANAGER] }: %s gets %i', async (role, status) => {
      const { bearer } = await signedIn(role)
      expect((await app.current.inject({ method: 'GET', url: '/test/managers', headers: bearer })).statusCode).toBe(status)
    })

    it('refuses a role a route does not list with AUTH_008', async () => {
      const student = await signedIn('STUDENT')
      expectProblem(await app.current.inject({ method: 'GET', url: '/test/owner-only', headers: student.bearer }), 403, 'AUTH_008')
      const ownerLogin = await signedIn('OWNER')
      expect((await app.current.inject({ method: 'GET', url: '/test/owner-only', headers: ownerLogin.bearer })).statusCode).toBe(200)
    })

    it.each([
      ['OWNER', 200],
      ['MANAGER', 200],
      ['INSTRUCTOR', 200],
      ['STUDENT', 403],
    ] as const)("guards a route of access 'staff': %s gets %i", async (role, status) => {
      const { bearer } = await signedIn(role)
      const response = await app.current.inject({ method: 'GET', url: '/test/staff/area', headers: bearer })
      expect(response.statusCode).toBe(status)
      if (status === 403) expectProblem(response, 403, 'AUTH_008')
    })

    it('answers AUTH_002, not AUTH_008, to a staff route without a token, and leaves public routes open', async () => {
      expectProblem(await app.current.inject({ method: 'GET', url: '/test/staff/area' }), 401, 'AUTH_002')
      expect((await app.current.inject({ method: 'GET', url: '/test/staff/public' })).statusCode).toBe(200)
    })

    it.each([
      ['STUDENT', 'GET', '/v1/sms/sender-setting/status'],
      ['STUDENT', 'GET', '/v1/sms-templates'],
      ['INSTRUCTOR', 'GET', '/v1/sms/sender-setting'],
      ['MANAGER', 'GET', '/v1/sms/sender-setting'],
    ] as const)('refuses a %s on %s %s with AUTH_008', async (role, method, url) => {
      const { bearer } = await signedIn(role)
      expectProblem(await app.current.inject({ method, url, headers: bearer }), 403, 'AUTH_008')
    })
  })

  describe('tenant isolation through the token', () => {
    it('never lets a token of tenant A read a row of tenant B', async () => {
      const a = await signedIn()
      const b = await createTenant()
      const userB = await insertUser(b)
      const foreign = await app.current.inject({ method: 'GET', url: `/test/users/${userB.id}`, headers: a.bearer })
      expect(foreign.statusCode).toBe(200)
      expect(foreign.json()).toEqual({ user: null })
      const own = await app.current.inject({ method: 'GET', url: `/test/users/${a.user.id}`, headers: a.bearer })
      expect(own.json()).toEqual({ user: { id: a.user.id, tenantId: a.tenant.id } })
      const visible = await app.current.inject({ method: 'GET', url: '/test/users', headers: a.bearer })
      expect(visible.json()).toEqual({ tenantIds: [a.tenant.id] })
    })

    it('binds the tenant of the token, whatever tenant the caller names elsewhere', async () => {
      const a = await signedIn()
      const b = await createTenant()
      const response = await whoami({ ...a.bearer, 'x-tenant-slug': b.slug, 'x-tenant-id': String(b.id) })
      expect(response.json()).toMatchObject({ requestTenantId: a.tenant.id, databaseTenant: String(a.tenant.id) })
    })
  })

  describe('cost of the token check', () => {
    // Counts the statements the pg driver sends; the embedded store has no pg driver to observe.
    // Counts what the pg driver sends and the socket writes it takes; the embedded store has no pg driver to observe.
    itPipelined('binds the tenant and checks the revocation list in the same write as the handler’s first statement', async () => {
      const { bearer } = await signedIn()
      // Warm the pool so connection set-up is not part of the measured request.
      expect((await app.current.inject({ method: 'GET', url: '/test/statements', headers: bearer })).statusCode).toBe(200)
      const query = pg.Client.prototype.query
      vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
        if (recording) statements.push(...statementsOf(args).map((recorded) => recorded.text))
        return (query as (...a: unknown[]) => unknown).apply(this, args)
      } as typeof query)
      // app.inject uses no socket: every socket write here goes to PostgreSQL.
      const writes = [vi.spyOn(net.Socket.prototype, '_writev'), vi.spyOn(net.Socket.prototype, '_write')]
      statements.length = 0
      recording = true
      try {
        expect((await app.current.inject({ method: 'GET', url: '/test/statements', headers: bearer })).json()).toEqual({ ok: true })
      } finally {
        recording = false
      }
      expect(seenByHandler).toEqual([])
      expect(statements).toHaveLength(6)
      // The role and the statement timeout are set inside the transaction, after its begin; a GET only reads.
      expect(statements.slice(0, 3)).toEqual(['begin read only', RUNTIME_ROLE, expect.stringMatching(RUNTIME_TIMEOUT)])
      // svc_request_scope binds the tenant and checks revocation and status (test/db/request-scope.test.ts).
      expect(statements[3]).toMatch(/^select svc_request_scope\(\$1::bigint, \$2::uuid, \$3::bigint\)/)
      expect(statements[4]).toMatch(/^select \$1::int as probe/)
      expect(statements[5]).toMatch(/^commit$/i)
      // begin, scope and the handler's statement in one write; the commit in another.
      expect(writes.reduce((sum, spy) => sum + spy.mock.calls.length, 0)).toBe(2)
    })

    itPipelined('answers GET /v1/me in one write: begin, scope, the read and its commit', async () => {
      const { bearer, user } = await signedIn()
      expect((await app.current.inject({ method: 'GET', url: '/v1/me', headers: bearer })).statusCode).toBe(200)
      const { result: response, queries } = await recordQueries(async () => {
        const writes = [vi.spyOn(net.Socket.prototype, '_writev'), vi.spyOn(net.Socket.prototype, '_write')]
        const answer = await app.current.inject({ method: 'GET', url: '/v1/me', headers: bearer })
        return { answer, writes: writes.reduce((sum, spy) => sum + spy.mock.calls.length, 0) }
      })
      expect(response.answer.json()).toMatchObject({ id: user.id })
      expect(queries.map((query) => query.text)).toEqual([
        'begin read only',
        RUNTIME_ROLE,
        expect.stringMatching(RUNTIME_TIMEOUT),
        expect.stringMatching(/^select svc_request_scope\(/),
        expect.stringMatching(/^select \* from svc_signed_in_user\(\$1::bigint\)/),
        'commit',
      ])
      // The commit the plugin sends at the end was answered by the client: it left with the read.
      expect(response.writes).toBe(1)
    })

    it('aborts a revoked token’s transaction before the handler’s first statement runs: a write never happens', async () => {
      const { bearer, user } = await signedIn()
      expect((await app.current.inject({ method: 'POST', url: '/v1/logout', headers: bearer })).statusCode).toBe(204)
      expectProblem(await app.current.inject({ method: 'POST', url: '/test/rename', headers: bearer }), 401, 'AUTH_004')
      const stored = await owner().selectFrom('users').select('name').where('id', '=', user.id).executeTakeFirstOrThrow()
      expect(stored.name).not.toBe('renamed by a revoked token')
    })

    it('runs a GET read only: a handler that writes is refused by PostgreSQL and nothing changes', async () => {
      const { bearer, user } = await signedIn()
      const response = await app.current.inject({ method: 'GET', url: '/test/rename-on-get', headers: bearer })
      expect(response.statusCode).toBe(500)
      const stored = await owner().selectFrom('users').select('name').where('id', '=', user.id).executeTakeFirstOrThrow()
      expect(stored.name).not.toBe('renamed by a GET')
    })

    it('answers AUTH_004 to a revoked token when the handler sends no statement or fails on its own', async () => {
      const { bearer } = await signedIn()
      expect((await app.current.inject({ method: 'POST', url: '/v1/logout', headers: bearer })).statusCode).toBe(204)
      expectProblem(await app.current.inject({ method: 'GET', url: '/test/no-statement', headers: bearer }), 401, 'AUTH_004')
      expectProblem(await app.current.inject({ method: 'GET', url: '/test/fails-first', headers: bearer }), 401, 'AUTH_004')
      // The same routes for a valid token: the answers above are the revocation, not the routes.
      const valid = await signedIn()
      expect((await app.current.inject({ method: 'GET', url: '/test/no-statement', headers: valid.bearer })).json()).toEqual({ ok: true })
      expectProblem(await app.current.inject({ method: 'GET', url: '/test/fails-first', headers: valid.bearer }), 404, 'NOT_FOUND')
    })

    it('looks the JTI up through the primary-key index of the revocation list', async () => {
      const { rows } = await sql<{ definition: string }>`
        select pg_get_indexdef(i.indexrelid) as definition
        from pg_index i where i.indrelid = 'revoked_access_tokens'::regclass and i.indisprimary`.execute(owner())
      expect(rows.map((row) => row.definition)).toEqual([expect.stringMatching(/USING btree \(jti\)$/)])
    })
  })
})

