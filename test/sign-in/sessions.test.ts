import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  decodeJwt,
  expectProblem,
  insertUserWithPassword,
  login,
  refresh,
  registerStudent,
  type AuthResult,
} from '../support/auth-fixtures.js'
import { createTenant, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { portalUser } from './portal-users.js'

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148'
const IPAD = 'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148'
const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36'

describe('device sessions', () => {
  const app = useTestApp()

  const student = () => portalUser(app.current)

  const sid = (result: AuthResult) => decodeJwt(result.accessToken).sid as string
  const sessionsOf = (userId: number) =>
    owner()
      .selectFrom('sessions')
      .select(['sid', 'deviceCategory', 'accessJti', 'refreshJti'])
      .where('userId', '=', userId)
      .orderBy('createdAt')
      .execute()
  /** The row a session holds once `tokens` are its current pair. */
  const storedSession = (sessionId: string, deviceCategory: string, tokens: AuthResult) => ({
    sid: sessionId,
    deviceCategory,
    accessJti: decodeJwt(tokens.accessToken).jti,
    refreshJti: decodeJwt(tokens.refreshToken).jti,
  })
  const reasonFor = async (id: string) =>
    (await owner().selectFrom('sessionRevocations').select('reason').where('sid', '=', id).executeTakeFirst())?.reason
  const list = (result: AuthResult) => app.current.inject({ method: 'GET', url: '/v1/me/sessions', headers: result.bearer })

  describe('Session state table', () => {
    it('none -> login -> active: tokens issued and the session stored with their JTIs', async () => {
      const { user, signIn } = await student()
      const web = await signIn()
      expect(await sessionsOf(user.id)).toEqual([storedSession(sid(web), 'WEB', web)])
      expect(decodeJwt(web.refreshToken).sid).toBe(sid(web))
    })

    it('none -> registration -> active', async () => {
      const tenant = await createTenant()
      const registered = await registerStudent(app.current, tenant.slug, {}, { headers: { 'user-agent': IPHONE } })
      expect(await sessionsOf(registered.user.id)).toEqual([storedSession(sid(registered), 'MOBILE', registered)])
    })

    it('active -> new login in the same category -> revoked with SESSION_REPLACED_BY_LOGIN', async () => {
      const { user, signIn } = await student()
      const first = await signIn()
      const second = await signIn()
      expect(await sessionsOf(user.id)).toEqual([expect.objectContaining({ sid: sid(second) })])
      expect(await reasonFor(sid(first))).toBe('SESSION_REPLACED_BY_LOGIN')
      expectProblem(await list(first), 401, 'AUTH_004')
      expect((await list(second)).statusCode).toBe(200)
    })

    it('active -> refresh -> active with both tokens rotated', async () => {
      const { user, signIn } = await student()
      const web = await signIn()
      const rotated = await refresh(app.current, web.refreshToken)
      expect(rotated.response.statusCode).toBe(200)
      expect(await sessionsOf(user.id)).toEqual([storedSession(sid(web), 'WEB', rotated)])
    })

    it('revoked (missing) -> refresh -> stays revoked with AUTH_017', async () => {
      const { user, signIn } = await student()
      const first = await signIn()
      const second = await signIn()
      for (let attempt = 0; attempt < 2; attempt++) {
        expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_017')
      }
      expect(await sessionsOf(user.id)).toEqual([expect.objectContaining({ sid: sid(second) })])
      expect(await reasonFor(sid(first))).toBe('SESSION_REPLACED_BY_LOGIN')
    })

    it('active -> logout -> ended with the access JTI blacklisted', async () => {
      const { user, signIn } = await student()
      const web = await signIn()
      expect((await app.current.inject({ method: 'POST', url: '/v1/logout', headers: web.bearer })).statusCode).toBe(204)
      expect(await sessionsOf(user.id)).toEqual([])
      const blacklisted = await owner()
        .selectFrom('revokedAccessTokens')
        .select('jti')
        .where('jti', '=', decodeJwt(web.accessToken).jti as string)
        .execute()
      expect(blacklisted).toHaveLength(1)
    })
  })

  describe('device categories', () => {
    it.each([
      ['an iPhone User-Agent', { 'user-agent': IPHONE }, 'MOBILE'],
      ['an iPad User-Agent', { 'user-agent': IPAD }, 'TABLET'],
      ['a desktop User-Agent', { 'user-agent': DESKTOP }, 'WEB'],
      ['no User-Agent', {}, 'WEB'],
      ['X-Device-Category: desktop (any case)', { 'x-device-category': 'desktop', 'user-agent': IPHONE }, 'DESKTOP'],
      ['X-Device-Category: Tablet over an iPhone User-Agent', { 'x-device-category': 'Tablet', 'user-agent': IPHONE }, 'TABLET'],
      ['an invalid X-Device-Category (falls back to the User-Agent)', { 'x-device-category': 'FRIDGE', 'user-agent': IPHONE }, 'MOBILE'],
    ])('files a login with %s under its category', async (_case, headers, category) => {
      const { user, signIn } = await student()
      await signIn({ headers: headers as Record<string, string> })
      expect((await sessionsOf(user.id)).map((session) => session.deviceCategory)).toEqual([category])
    })

    it('keeps one active session per category and replaces only the same category', async () => {
      const { user, signIn } = await student()
      const web = await signIn({ headers: { 'user-agent': DESKTOP } })
      const phone = await signIn({ headers: { 'user-agent': IPHONE } })
      const tablet = await signIn({ headers: { 'x-device-category': 'TABLET' } })
      const desktop = await signIn({ headers: { 'x-device-category': 'DESKTOP' } })
      expect((await sessionsOf(user.id)).map((session) => session.deviceCategory).sort()).toEqual(['DESKTOP', 'MOBILE', 'TABLET', 'WEB'])

      // The header names the category too: this replaces the iPhone session.
      const secondPhone = await signIn({ headers: { 'x-device-category': 'mobile', 'user-agent': DESKTOP } })
      const sids = (await sessionsOf(user.id)).map((session) => session.sid).sort()
      expect(sids).toEqual([sid(web), sid(tablet), sid(desktop), sid(secondPhone)].sort())
      expectProblem((await refresh(app.current, phone.refreshToken)).response, 401, 'AUTH_017')
    })

    it('leaves exactly one active session after simultaneous logins in one category', async () => {
      const { user, signIn } = await student()
      const results = await Promise.all(Array.from({ length: 6 }, () => signIn({ headers: { 'user-agent': IPHONE } })))
      const sessions = await sessionsOf(user.id)
      expect(sessions).toHaveLength(1)
      const survivor = results.find((result) => sid(result) === sessions[0]!.sid)
      expect(survivor).toBeDefined()
      for (const result of results) {
        if (result === survivor) continue
        expectProblem((await refresh(app.current, result.refreshToken)).response, 401, 'AUTH_017')
        expectProblem(await list(result), 401, 'AUTH_004')
      }
      expect((await refresh(app.current, survivor!.refreshToken)).response.statusCode).toBe(200)
    })
  })

  describe('GET /v1/me/sessions', () => {
    it('lists the caller\'s sessions newest first, marking the current one', async () => {
      const { signIn } = await student()
      const web = await signIn({ headers: { 'user-agent': DESKTOP }, remoteAddress: '10.1.2.3' })
      const phone = await signIn({ headers: { 'user-agent': IPHONE }, remoteAddress: '10.1.2.4' })
      const response = await list(web)
      expect(response.statusCode).toBe(200)
      const items = response.json().items
      expect(items).toEqual([
        {
          sid: sid(phone),
          deviceCategory: 'MOBILE',
          userAgent: IPHONE,
          ipAddress: '10.1.2.4',
          createdAt: expect.any(String),
          lastRefreshedAt: null,
          current: false,
        },
        {
          sid: sid(web),
          deviceCategory: 'WEB',
          userAgent: DESKTOP,
          ipAddress: '10.1.2.3',
          createdAt: expect.any(String),
          lastRefreshedAt: null,
          current: true,
        },
      ])
      expect(Date.parse(items[0].createdAt)).toBeGreaterThanOrEqual(Date.parse(items[1].createdAt))
      expect((await list(phone)).json().items.map((item: { current: boolean }) => item.current)).toEqual([true, false])
    })

    it('shows lastRefreshedAt after a refresh', async () => {
      const { signIn } = await student()
      const web = await signIn()
      const rotated = await refresh(app.current, web.refreshToken)
      const [item] = (await list(rotated)).json().items
      expect(Date.parse(item.lastRefreshedAt)).not.toBeNaN()
    })

    it('never lists sessions of another user or another tenant', async () => {
      const mine = await student()
      const neighbour = await insertUserWithPassword(mine.tenant)
      const stranger = await student()
      const me = await mine.signIn()
      await login(app.current, { userLoginId: neighbour.userLoginId, password: neighbour.password, customId: mine.tenant.customId })
      await stranger.signIn()
      expect((await list(me)).json().items.map((item: { sid: string }) => item.sid)).toEqual([sid(me)])
    })

    it('answers AUTH_002 without a token', async () => {
      expectProblem(await app.current.inject({ method: 'GET', url: '/v1/me/sessions' }), 401, 'AUTH_002')
    })
  })

  describe('DELETE /v1/me/sessions/{sid}', () => {
    it('revokes the session (REVOKED_BY_USER) and its access token stops working at once', async () => {
      const { user, signIn } = await student()
      const web = await signIn()
      const phone = await signIn({ headers: { 'user-agent': IPHONE } })
      const response = await app.current.inject({ method: 'DELETE', url: `/v1/me/sessions/${sid(phone)}`, headers: web.bearer })
      expect(response.statusCode).toBe(204)
      expect(response.body).toBe('')
      expect((await sessionsOf(user.id)).map((session) => session.sid)).toEqual([sid(web)])
      expect(await reasonFor(sid(phone))).toBe('REVOKED_BY_USER')
      expectProblem(await list(phone), 401, 'AUTH_004')
      expectProblem((await refresh(app.current, phone.refreshToken)).response, 401, 'AUTH_007')
    })

    it('answers AUTH_014 for a session of another user in the same tenant, and leaves it alone', async () => {
      const mine = await student()
      const me = await mine.signIn()
      const neighbour = await insertUserWithPassword(mine.tenant)
      const theirs = await login(app.current, { userLoginId: neighbour.userLoginId, password: neighbour.password, customId: mine.tenant.customId })
      const response = await app.current.inject({ method: 'DELETE', url: `/v1/me/sessions/${sid(theirs)}`, headers: me.bearer })
      expectProblem(response, 404, 'AUTH_014')
      expect((await list(theirs)).statusCode).toBe(200)
    })

    it('answers AUTH_014 for a session of another tenant, and leaves it alone', async () => {
      const mine = await student()
      const other = await student()
      const me = await mine.signIn()
      const theirs = await other.signIn()
      const response = await app.current.inject({ method: 'DELETE', url: `/v1/me/sessions/${sid(theirs)}`, headers: me.bearer })
      expectProblem(response, 404, 'AUTH_014')
      expect((await list(theirs)).statusCode).toBe(200)
    })

    it('answers AUTH_014 for an unknown sid', async () => {
      const { signIn } = await student()
      const me = await signIn()
      expectProblem(
        await app.current.inject({ method: 'DELETE', url: `/v1/me/sessions/${randomUUID()}`, headers: me.bearer }),
        404,
        'AUTH_014',
      )
    })

    it.each(['not-a-uuid', '1', 'a'.repeat(100), `${randomUUID()}x`, 'a'.repeat(5000)])('answers VALIDATION_FAILED for the sid %#', async (bad) => {
      const { signIn } = await student()
      const me = await signIn()
      const response = await app.current.inject({ method: 'DELETE', url: `/v1/me/sessions/${bad}`, headers: me.bearer })
      expectProblem(response, 400, 'VALIDATION_FAILED')
    })
  })

  describe('DELETE /v1/me/sessions', () => {
    it('revokes every session of the caller except the current one', async () => {
      const { user, signIn } = await student()
      const web = await signIn()
      const phone = await signIn({ headers: { 'user-agent': IPHONE } })
      const tablet = await signIn({ headers: { 'user-agent': IPAD } })
      const response = await app.current.inject({ method: 'DELETE', url: '/v1/me/sessions', headers: web.bearer })
      expect(response.statusCode).toBe(204)
      expect((await sessionsOf(user.id)).map((session) => session.sid)).toEqual([sid(web)])
      for (const other of [phone, tablet]) {
        expect(await reasonFor(sid(other))).toBe('REVOKED_BY_USER')
        expectProblem(await list(other), 401, 'AUTH_004')
        expectProblem((await refresh(app.current, other.refreshToken)).response, 401, 'AUTH_007')
      }
      expect((await list(web)).statusCode).toBe(200)
      expect((await refresh(app.current, web.refreshToken)).response.statusCode).toBe(200)
    })

    it('leaves other users\' sessions alone', async () => {
      const mine = await student()
      const me = await mine.signIn()
      const neighbour = await insertUserWithPassword(mine.tenant)
      const theirs = await login(app.current, { userLoginId: neighbour.userLoginId, password: neighbour.password, customId: mine.tenant.customId })
      await app.current.inject({ method: 'DELETE', url: '/v1/me/sessions', headers: me.bearer })
      expect((await list(theirs)).statusCode).toBe(200)
    })
  })
})
