import { describe, expect, it } from 'vitest'
import { decodeJwt, expectProblem, insertUserWithPassword, login, refresh, uniqueAddress } from '../support/auth-fixtures.js'
import { createTenant, owner } from '../support/fixtures.js'
import { itConcurrent, useTestApp } from '../support/helper.js'
import { portalUser } from './portal-users.js'

// Two tabs refreshing at once used to sign the user out, because the loser presented the token the winner had just
// replaced. Now, within SVC_REFRESH_REUSE_GRACE_SECONDS of the rotation, that token answers 200 with the session's
// current pair.
describe('POST /v1/refresh reuse grace', () => {
  const app = useTestApp({ env: { SVC_REFRESH_REUSE_GRACE_SECONDS: '10' } })

  const signedIn = async () => (await portalUser(app.current)).signIn()

  const me = (accessToken: string) =>
    app.current.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${accessToken}` } })
  const rewindRotation = (sid: string, seconds: number) =>
    owner()
      .updateTable('sessions')
      .set({ lastRefreshedAt: new Date(Date.now() - seconds * 1000) })
      .where('sid', '=', sid)
      .execute()

  itConcurrent('answers 200 to 10 simultaneous refreshes with one token, and the session stays usable', async () => {
    const first = await signedIn()
    const remoteAddress = uniqueAddress()
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(app.current, first.refreshToken, { remoteAddress })))
    expect(results.map((result) => result.response.statusCode)).toEqual(results.map(() => 200))
    // Every answer carries the one current pair, so revoking by JTI reaches all of them.
    expect(new Set(results.map((result) => decodeJwt(result.refreshToken).jti)).size).toBe(1)
    expect(new Set(results.map((result) => decodeJwt(result.accessToken).jti)).size).toBe(1)
    for (const result of results) expect((await me(result.accessToken)).statusCode).toBe(200)
    const next = await refresh(app.current, results[3]!.refreshToken, { remoteAddress })
    expect(next.response.statusCode).toBe(200)
    expect((await me(next.accessToken)).statusCode).toBe(200)
  })

  it('answers the replaced token within the window with the current pair, without rotating again', async () => {
    const first = await signedIn()
    const second = await refresh(app.current, first.refreshToken)
    expect(second.response.statusCode).toBe(200)
    const again = await refresh(app.current, first.refreshToken)
    expect(again.response.statusCode).toBe(200)
    expect(decodeJwt(again.refreshToken).jti).toBe(decodeJwt(second.refreshToken).jti)
    expect(decodeJwt(again.accessToken).jti).toBe(decodeJwt(second.accessToken).jti)
    expect(decodeJwt(again.refreshToken).exp).toBe(decodeJwt(second.refreshToken).exp)
    expect((await refresh(app.current, second.refreshToken)).response.statusCode).toBe(200)
  })

  it('treats the replaced token after the window as reuse (AUTH_016) and revokes the session', async () => {
    const first = await signedIn()
    const second = await refresh(app.current, first.refreshToken)
    expect(second.response.statusCode).toBe(200)
    const sid = decodeJwt(first.refreshToken).sid as string
    await rewindRotation(sid, 11)
    expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_016')
    expectProblem(await me(second.accessToken), 401, 'AUTH_004')
    expectProblem((await refresh(app.current, second.refreshToken)).response, 401, 'AUTH_016')
  })

  it('treats any older token as reuse (AUTH_016), even within the window', async () => {
    const first = await signedIn()
    const second = await refresh(app.current, first.refreshToken)
    const third = await refresh(app.current, second.refreshToken)
    expect(third.response.statusCode).toBe(200)
    expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_016')
    expectProblem(await me(third.accessToken), 401, 'AUTH_004')
  })
})

describe('POST /v1/refresh reuse grace switched off', () => {
  const app = useTestApp({ env: { SVC_REFRESH_REUSE_GRACE_SECONDS: '0' } })

  it('treats the replaced token as reuse at once (AUTH_016)', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant)
    const first = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
    expect((await refresh(app.current, first.refreshToken)).response.statusCode).toBe(200)
    expectProblem((await refresh(app.current, first.refreshToken)).response, 401, 'AUTH_016')
  })
})
