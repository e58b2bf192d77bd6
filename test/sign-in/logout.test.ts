import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { decodeJwt, expectProblem, insertUserWithPassword, login, refresh, type AuthResult } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { portalUser } from './portal-users.js'

describe('logout', () => {
  const app = useTestApp()

  /** One user signed in on WEB and on MOBILE. */
  async function twoDevices() {
    const { tenant, user, credentials, signIn } = await portalUser(app.current)
    const web = await signIn()
    const mobile = await signIn({ headers: { 'x-device-category': 'MOBILE' } })
    return { tenant, user, web, mobile, credentials }
  }

  const sid = (result: AuthResult) => decodeJwt(result.accessToken).sid as string
  const jti = (result: AuthResult) => decodeJwt(result.accessToken).jti as string
  const sessionExists = async (id: string) =>
    (await owner().selectFrom('sessions').select('sid').where('sid', '=', id).executeTakeFirst()) !== undefined
  const reasonFor = async (id: string) =>
    (await owner().selectFrom('sessionRevocations').select('reason').where('sid', '=', id).executeTakeFirst())?.reason
  const blacklistedUntil = async (tokenId: string) =>
    (await owner().selectFrom('revokedAccessTokens').select('expiresAt').where('jti', '=', tokenId).executeTakeFirst())?.expiresAt
  /** Blacklists a new token id until `milliseconds` from now (negative: already expired); returns the id. */
  const blacklistedFor = async (milliseconds: number) => {
    const tokenId = randomUUID()
    await owner().insertInto('revokedAccessTokens').values({ jti: tokenId, expiresAt: new Date(Date.now() + milliseconds) }).execute()
    return tokenId
  }
  const listSessions = (result: AuthResult) =>
    app.current.inject({ method: 'GET', url: '/v1/me/sessions', headers: result.bearer })

  function expectClearedCookies(response: Awaited<ReturnType<typeof listSessions>>) {
    const cleared = response.cookies.map((cookie) => ({ name: cookie.name, value: cookie.value, maxAge: cookie.maxAge, path: cookie.path }))
    expect(cleared.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'svc_access_token', value: '', maxAge: 0, path: '/' },
      { name: 'svc_refresh_token', value: '', maxAge: 0, path: '/' },
    ])
  }

  describe('POST /v1/logout', () => {
    it('answers 204, ends the session (LOGOUT), blacklists the access JTI until it expires and clears both cookies', async () => {
      const { web } = await twoDevices()
      const response = await app.current.inject({ method: 'POST', url: '/v1/logout', headers: web.bearer })
      expect(response.statusCode).toBe(204)
      expect(response.body).toBe('')
      expectClearedCookies(response)

      expect(await sessionExists(sid(web))).toBe(false)
      expect(await reasonFor(sid(web))).toBe('LOGOUT')
      expect((await blacklistedUntil(jti(web)))?.getTime()).toBe((decodeJwt(web.accessToken).exp as number) * 1000)
      expectProblem(await listSessions(web), 401, 'AUTH_004')
      expectProblem((await refresh(app.current, web.refreshToken)).response, 401, 'AUTH_007')
    })

    it('leaves the sessions of the other device categories alone', async () => {
      const { web, mobile } = await twoDevices()
      await app.current.inject({ method: 'POST', url: '/v1/logout', headers: web.bearer })
      expect(await sessionExists(sid(mobile))).toBe(true)
      expect((await listSessions(mobile)).statusCode).toBe(200)
    })

    it('works with the access cookie instead of the bearer header', async () => {
      const { web } = await twoDevices()
      const response = await app.current.inject({ method: 'POST', url: '/v1/logout', cookies: { svc_access_token: web.accessToken } })
      expect(response.statusCode).toBe(204)
      expect(await sessionExists(sid(web))).toBe(false)
    })

    it('blacklists the presented token even when it is older than the session\'s current one', async () => {
      const { web } = await twoDevices()
      const rotated = await refresh(app.current, web.refreshToken)
      expect(rotated.response.statusCode).toBe(200)
      const response = await app.current.inject({ method: 'POST', url: '/v1/logout', headers: rotated.bearer })
      expect(response.statusCode).toBe(204)
      expect(await blacklistedUntil(jti(web))).toBeInstanceOf(Date)
      expect(await blacklistedUntil(jti(rotated))).toBeInstanceOf(Date)
    })

    it('answers AUTH_002 without a token and AUTH_004 a second time', async () => {
      const { web } = await twoDevices()
      expectProblem(await app.current.inject({ method: 'POST', url: '/v1/logout' }), 401, 'AUTH_002')
      await app.current.inject({ method: 'POST', url: '/v1/logout', headers: web.bearer })
      expectProblem(await app.current.inject({ method: 'POST', url: '/v1/logout', headers: web.bearer }), 401, 'AUTH_004')
    })
  })

  describe('POST /v1/logout-all', () => {
    it('answers 204, ends every session of the user (LOGOUT_ALL), blacklists their access JTIs and clears the cookies', async () => {
      const { web, mobile, user } = await twoDevices()
      const response = await app.current.inject({ method: 'POST', url: '/v1/logout-all', headers: web.bearer })
      expect(response.statusCode).toBe(204)
      expectClearedCookies(response)

      const remaining = await owner().selectFrom('sessions').select('sid').where('userId', '=', user.id).execute()
      expect(remaining).toEqual([])
      for (const device of [web, mobile]) {
        expect(await reasonFor(sid(device))).toBe('LOGOUT_ALL')
        expect(await blacklistedUntil(jti(device))).toBeInstanceOf(Date)
        expectProblem(await listSessions(device), 401, 'AUTH_004')
        expectProblem((await refresh(app.current, device.refreshToken)).response, 401, 'AUTH_007')
      }
    })

    it('leaves other users of the tenant signed in', async () => {
      const { web, tenant } = await twoDevices()
      const other = await insertUserWithPassword(tenant)
      const otherLogin = await login(app.current, { userLoginId: other.userLoginId, password: other.password, customId: tenant.customId })
      await app.current.inject({ method: 'POST', url: '/v1/logout-all', headers: web.bearer })
      expect((await listSessions(otherLogin)).statusCode).toBe(200)
      expect((await refresh(app.current, otherLogin.refreshToken)).response.statusCode).toBe(200)
    })

    it('answers AUTH_002 without a token', async () => {
      expectProblem(await app.current.inject({ method: 'POST', url: '/v1/logout-all' }), 401, 'AUTH_002')
    })
  })

  describe('blacklist maintenance', () => {
    it('purges expired blacklist entries and keeps live ones', async () => {
      const expired = await blacklistedFor(-1000)
      const live = await blacklistedFor(60_000)
      expect(await app.current.purgeExpired()).toBeGreaterThanOrEqual(1)
      expect(await blacklistedUntil(expired)).toBeUndefined()
      expect(await blacklistedUntil(live)).toBeInstanceOf(Date)
    })

    it('purges the blacklist entry of a logged-out token once it has expired', async () => {
      const { web } = await twoDevices()
      await app.current.inject({ method: 'POST', url: '/v1/logout', headers: web.bearer })
      await owner().updateTable('revokedAccessTokens').set({ expiresAt: new Date(Date.now() - 1000) }).where('jti', '=', jti(web)).execute()
      await app.current.purgeExpired()
      expect(await blacklistedUntil(jti(web))).toBeUndefined()
    })
  })
})
