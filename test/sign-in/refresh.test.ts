import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import {
  decodeJwt,
  expectProblem,
  insertUserWithPassword,
  login,
  refresh,
  signJwt,
  type AuthResult,
} from '../support/auth-fixtures.js'
import { createTenant, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

describe('POST /v1/refresh', () => {
  // Rotation and reuse as docs/api.md#refresh describes them; the reuse grace is covered in refresh-grace.test.ts.
  const app = useTestApp({ env: { SVC_REFRESH_REUSE_GRACE_SECONDS: '0' } })

  async function signedIn(extras: { userAgent?: string } = {}) {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant)
    const result = await login(
      app.current,
      { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId },
      extras.userAgent ? { headers: { 'user-agent': extras.userAgent } } : {},
    )
    expect(result.response.statusCode).toBe(200)
    return { tenant, user, ...result }
  }

  const sessionRow = (sid: string) =>
    owner()
      .selectFrom('sessions')
      .select(['sid', 'accessJti', 'refreshJti', 'refreshExpiresAt', 'lastRefreshedAt'])
      .where('sid', '=', sid)
      .executeTakeFirst()

  const reasonFor = async (sid: string) =>
    (await owner().selectFrom('sessionRevocations').select('reason').where('sid', '=', sid).executeTakeFirst())?.reason

  const me = (result: Pick<AuthResult, 'bearer'>) =>
    app.current.inject({ method: 'GET', url: '/v1/me/sessions', headers: result.bearer })

  it('rotates both tokens, keeps the session and answers with user null', async () => {
    const first = await signedIn()
    const sid = decodeJwt(first.accessToken).sid as string
    const rotated = await refresh(app.current, first.refreshToken)
    expect(rotated.response.statusCode).toBe(200)
    expect(rotated.response.json()).toEqual({ accessExpiresIn: 3600, refreshExpiresIn: 604800, user: null })
    expect(rotated.response.body).not.toContain(rotated.accessToken)
    expect(rotated.response.body).not.toContain(rotated.refreshToken)

    const access = decodeJwt(rotated.accessToken)
    const refreshClaims = decodeJwt(rotated.refreshToken)
    expect(access.sid).toBe(sid)
    expect(refreshClaims.sid).toBe(sid)
    expect(access.jti).not.toBe(decodeJwt(first.accessToken).jti)
    expect(refreshClaims.jti).not.toBe(decodeJwt(first.refreshToken).jti)
    const row = await sessionRow(sid)
    expect(row).toMatchObject({ accessJti: access.jti, refreshJti: refreshClaims.jti })
    expect(row!.lastRefreshedAt).toBeInstanceOf(Date)
    expect((await me(rotated)).statusCode).toBe(200)
  })

  it('can rotate again with the newest refresh token', async () => {
    const first = await signedIn()
    const second = await refresh(app.current, first.refreshToken)
    const third = await refresh(app.current, second.refreshToken)
    expect(third.response.statusCode).toBe(200)
    expect((await me(third)).statusCode).toBe(200)
  })

  it('answers AUTH_016 and revokes the session when a rotated refresh token is presented again', async () => {
    const first = await signedIn()
    const sid = decodeJwt(first.accessToken).sid as string
    const rotated = await refresh(app.current, first.refreshToken)
    expect(rotated.response.statusCode).toBe(200)

    expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_016')
    expect(await sessionRow(sid)).toBeUndefined()
    expect(await reasonFor(sid)).toBe('REFRESH_TOKEN_REUSED')
    // The legitimate holder's tokens die with the session.
    expectProblem((await refresh(app.current, rotated.refreshToken)).response, 401, 'AUTH_016')
    expectProblem(await me(rotated), 401, 'AUTH_004')
  })

  it('lets exactly one of several simultaneous refreshes with one token win', async () => {
    const first = await signedIn()
    const results = await Promise.all(Array.from({ length: 6 }, () => refresh(app.current, first.refreshToken)))
    const winners = results.filter((result) => result.response.statusCode === 200)
    expect(winners).toHaveLength(1)
    for (const loser of results.filter((result) => result.response.statusCode !== 200)) {
      expectProblem(loser.response, 401, 'AUTH_016')
      expect(loser.response.headers['set-cookie']).toBeUndefined()
    }
  })

  it('reads only the cookie: a token in the body or the Authorization header is not a refresh token', async () => {
    const first = await signedIn()
    const inBody = await app.current.inject({ method: 'POST', url: '/v1/refresh', payload: { svc_refresh_token: first.refreshToken, refreshToken: first.refreshToken } })
    expectProblem(inBody, 401, 'AUTH_005')
    const inHeader = await app.current.inject({ method: 'POST', url: '/v1/refresh', headers: { authorization: `Bearer ${first.refreshToken}` } })
    expectProblem(inHeader, 401, 'AUTH_005')
    // Still the current token: neither attempt consumed it.
    expect((await refresh(app.current, first.refreshToken)).response.statusCode).toBe(200)
  })

  it.each([
    ['malformed JSON', 'application/json', '{"refresh'],
    ['a JSON array', 'application/json', '[1, 2'],
    ['plain text', 'text/plain', 'hello'],
    ['binary', 'application/octet-stream', '\u0000\u0001\u0002'],
  ])('ignores a request body of %s', async (_case, contentType, payload) => {
    const first = await signedIn()
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/refresh',
      headers: { 'content-type': contentType },
      cookies: { svc_refresh_token: first.refreshToken },
      payload,
    })
    expect(response.statusCode).toBe(200)
    expect(response.json().user).toBeNull()
  })

  it('answers AUTH_005 without the refresh cookie', async () => {
    expectProblem(await app.current.inject({ method: 'POST', url: '/v1/refresh' }), 401, 'AUTH_005')
    expectProblem(
      await app.current.inject({ method: 'POST', url: '/v1/refresh', cookies: { svc_refresh_token: '' } }),
      401,
      'AUTH_005',
    )
  })

  describe('AUTH_006', () => {
    it.each([
      ['garbage', () => 'not-a-jwt'],
      ['a truncated token', (token: string) => token.slice(0, -5)],
      ['a bad signature', (token: string) => signJwt(decodeJwt(token), { secret: 'another-secret-that-is-at-least-32-bytes' })],
      ['an access token', (_token: string, access: string) => access],
      ['an expired token', (token: string) => signJwt({ ...decodeJwt(token), iat: 1_600_000_000, exp: 1_600_000_060 })],
      ['another issuer', (token: string) => signJwt({ ...decodeJwt(token), iss: 'someone-else' })],
      ['no issuer', (token: string) => signJwt({ ...decodeJwt(token), iss: undefined })],
      ['alg none', (token: string) => `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${token.split('.')[1]}.`],
    ])('answers AUTH_006 for %s', async (_case, forge) => {
      const first = await signedIn()
      expectProblem((await refresh(app.current, forge(first.refreshToken, first.accessToken))).response, 401, 'AUTH_006')
    })

    it('answers AUTH_006 when the session is gone and no reason is known', async () => {
      const first = await signedIn()
      const sid = decodeJwt(first.refreshToken).sid as string
      await owner().deleteFrom('sessions').where('sid', '=', sid).execute()
      expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_006')
    })

    it('answers AUTH_006 once the stored reason has outlived the refresh token, and the purge removes it', async () => {
      const first = await signedIn()
      const sid = decodeJwt(first.refreshToken).sid as string
      expect((await app.current.inject({ method: 'POST', url: '/v1/logout', headers: first.bearer })).statusCode).toBe(204)
      expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_007')

      await owner().updateTable('sessionRevocations').set({ expiresAt: new Date(Date.now() - 1000) }).where('sid', '=', sid).execute()
      expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_006')
      await app.current.purgeExpired()
      expect(await reasonFor(sid)).toBeUndefined()
    })
  })

  it('keeps a revocation reason exactly until the refresh token would have expired', async () => {
    const first = await signedIn()
    const sid = decodeJwt(first.refreshToken).sid as string
    await app.current.inject({ method: 'POST', url: '/v1/logout', headers: first.bearer })
    const row = await owner().selectFrom('sessionRevocations').select(['reason', 'expiresAt']).where('sid', '=', sid).executeTakeFirstOrThrow()
    expect(row.reason).toBe('LOGOUT')
    expect(row.expiresAt.getTime()).toBe((decodeJwt(first.refreshToken).exp as number) * 1000)
    await app.current.purgeExpired()
    expect(await reasonFor(sid)).toBe('LOGOUT')
  })

  describe('AUTH_007: the session was ended', () => {
    it('after logout', async () => {
      const first = await signedIn()
      await app.current.inject({ method: 'POST', url: '/v1/logout', headers: first.bearer })
      expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_007')
    })

    it('after logout-all', async () => {
      const first = await signedIn()
      await app.current.inject({ method: 'POST', url: '/v1/logout-all', headers: first.bearer })
      expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_007')
    })

    it('after the user revoked the session', async () => {
      const web = await signedIn()
      const mobile = await login(
        app.current,
        { userLoginId: web.user.userLoginId, password: web.user.password, customId: web.tenant.customId },
        { headers: { 'x-device-category': 'MOBILE' } },
      )
      const sid = decodeJwt(mobile.refreshToken).sid as string
      const revoked = await app.current.inject({ method: 'DELETE', url: `/v1/me/sessions/${sid}`, headers: web.bearer })
      expect(revoked.statusCode).toBe(204)
      expectProblem((await refresh(app.current, mobile.refreshToken)).response, 401, 'AUTH_007')
      expect((await refresh(app.current, web.refreshToken)).response.statusCode).toBe(200)
    })
  })

  it('answers AUTH_017 for a session replaced by a later login in the same device category, every time', async () => {
    const first = await signedIn()
    const second = await login(app.current, {
      userLoginId: first.user.userLoginId,
      password: first.user.password,
      customId: first.tenant.customId,
    })
    expect(second.response.statusCode).toBe(200)
    const replaced = await refresh(app.current, first.refreshToken)
    const problem = expectProblem(replaced.response, 401, 'AUTH_017')
    expect(problem.title).toMatch(/replaced/i)
    expect(problem.detail).toMatch(/replaced/i)
    expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_017')
    // The replacing session is untouched by the failed attempts.
    expect((await refresh(app.current, second.refreshToken)).response.statusCode).toBe(200)
  })

  it.each(['SUSPENDED', 'CLOSED'] as const)('answers AUTH_010 once the tenant is %s', async (status) => {
    const first = await signedIn()
    await owner().updateTable('tenants').set({ status }).where('id', '=', first.tenant.id).execute()
    expectProblem((await refresh(app.current, first.refreshToken)).response, 403, 'AUTH_010')
  })

  it.each(['SUSPENDED', 'DELETED'] as const)('answers AUTH_015 once the user is %s', async (status) => {
    const first = await signedIn()
    await owner().updateTable('users').set({ status }).where('id', '=', first.user.id).execute()
    expectProblem((await refresh(app.current, first.refreshToken)).response, 403, 'AUTH_015')
  })

  it('stores refresh tokens only as JTIs, never raw', async () => {
    const first = await signedIn()
    const rotated = await refresh(app.current, first.refreshToken)
    const sid = decodeJwt(rotated.refreshToken).sid as string
    const row = await owner().selectFrom('sessions').selectAll().where('sid', '=', sid).executeTakeFirstOrThrow()
    expect(row.refreshJti).toBe(decodeJwt(rotated.refreshToken).jti)
    const stored = JSON.stringify(row)
    for (const token of [first.refreshToken, rotated.refreshToken, first.accessToken, rotated.accessToken]) {
      for (const part of token.split('.')) expect(stored).not.toContain(part)
    }
    const { rows: columns } = await sql<{ name: string; type: string }>`
      select column_name as name, data_type as type from information_schema.columns
      where table_name = 'sessions' and column_name like '%jti'`.execute(owner())
    // Token references are UUID columns: a JWT cannot even be stored there.
    expect(columns.sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      { name: 'access_jti', type: 'uuid' },
      { name: 'previous_refresh_jti', type: 'uuid' },
      { name: 'refresh_jti', type: 'uuid' },
    ])
  })

  it('cannot be used by a token of one tenant to refresh a session of another', async () => {
    const a = await signedIn()
    const b = await signedIn()
    // Same signing key, A's token rewritten to claim B's tenant: the session lookup runs in B and finds nothing of A's.
    const claims = decodeJwt(a.refreshToken)
    const forged = signJwt({ ...claims, tenant_id: b.tenant.id, tenant_slug: b.tenant.slug })
    expectProblem((await refresh(app.current, forged)).response, 401, 'AUTH_006')
    expect((await refresh(app.current, b.refreshToken)).response.statusCode).toBe(200)
  })
})
