import { describe, expect, it } from 'vitest'
import { expectProblem, login, registerOwner, strongPassword, type AuthResult } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { expectLocked, LOCKOUT_SETTINGS, MAX_FAILURES } from './lockout-settings.js'
import { portalUser } from './portal-users.js'

describe('one login-failure count per user, whatever proves the password', () => {

  const app = useTestApp({ env: LOCKOUT_SETTINGS })

  const changePassword = (signedIn: AuthResult, currentPassword: string, newPassword = strongPassword()) =>
    app.current.inject({ method: 'POST', url: '/v1/me/password', headers: signedIn.bearer, payload: { currentPassword, newPassword } })

  it(`locks an owner after ${MAX_FAILURES} failures of root and portal entry together, on both entries`, async () => {
    const registered = await registerOwner(app.current)
    const root = { userLoginId: registered.loginId }
    const portal = { userLoginId: registered.loginId, customId: registered.user.tenantCustomId }
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      const entry = attempt % 2 === 0 ? root : portal
      expectProblem((await login(app.current, { ...entry, password: strongPassword() })).response, 401, 'AUTH_001')
    }
    expectLocked((await login(app.current, { ...root, password: registered.password })).response)
    expectLocked((await login(app.current, { ...portal, password: registered.password })).response)
  })

  it('counts a wrong current password of a password change as a failed login of the user', async () => {
    const { credentials, signIn } = await portalUser(app.current)
    const signedIn = await signIn()
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      expectProblem(await changePassword(signedIn, strongPassword()), 400, 'AUTH_013')
    }
    expectLocked((await login(app.current, credentials)).response)
  })

  it('answers AUTH_018 to a password change of a locked user, even with the right current password, and changes nothing', async () => {
    const { user, credentials, signIn } = await portalUser(app.current)
    const signedIn = await signIn()
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      expectProblem((await login(app.current, { ...credentials, password: strongPassword() })).response, 401, 'AUTH_001')
    }
    const storedHash = () => owner().selectFrom('users').select('passwordHash').where('id', '=', user.id).executeTakeFirstOrThrow()
    const before = await storedHash()
    expectLocked(await changePassword(signedIn, credentials.password))
    expect(await storedHash()).toEqual(before)
  })

  it("forgives the user's earlier failed logins once a password change proves the current password", async () => {
    const { credentials, signIn } = await portalUser(app.current)
    const signedIn = await signIn()
    const newPassword = strongPassword()
    for (let attempt = 0; attempt < MAX_FAILURES - 1; attempt++) {
      expectProblem((await login(app.current, { ...credentials, password: strongPassword() })).response, 401, 'AUTH_001')
    }
    expect((await changePassword(signedIn, credentials.password, newPassword)).statusCode).toBe(204)
    for (let attempt = 0; attempt < MAX_FAILURES - 1; attempt++) {
      expectProblem((await login(app.current, { ...credentials, password: strongPassword() })).response, 401, 'AUTH_001')
    }
    expect((await login(app.current, { ...credentials, password: newPassword })).response.statusCode).toBe(200)
  })
})
