import { describe, expect, it } from 'vitest'
import { decodeJwt, expectProblem, login, uniqueAddress } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { storedAuditEvents, theAuditEvent } from '../audit/audit-fixtures.js'
import { SoftAuthenticator } from '../support/passkey-authenticator.js'
import { enrol, PASSKEY_ENV, signedInUser, signInOptions, signInWith } from './passkey-bed.js'

describe('passkey sign-in (POST /v1/login/passkey/options, POST /v1/login/passkey)', () => {
  const app = useTestApp({ env: { ...PASSKEY_ENV, SVC_LOGIN_MAX_FAILURES: '3' } })

  it('answers request options with a challengeId, the RP ID, no allowCredentials and required user verification', async () => {
    const response = await signInOptions(app.current)
    expect(response.statusCode).toBe(200)
    const options = response.json()
    expect(options).toMatchObject({ rpId: 'academy.example', allowCredentials: [], userVerification: 'required', timeout: 300_000 })
    expect(options.challengeId).toMatch(/^[0-9a-f-]{36}$/)
    const stored = await owner().selectFrom('passkeySignInChallenges').selectAll().where('id', '=', options.challengeId).executeTakeFirstOrThrow()
    // Only the challenge's hash is stored, with its expiry (300 s).
    expect(stored.challengeHash).not.toBe(options.challenge)
    const seconds = (stored.expiresAt.getTime() - stored.createdAt.getTime()) / 1000
    expect(Math.round(seconds)).toBe(300)
  })

  it.each(['ES256', 'EdDSA'] as const)('signs in with an %s passkey exactly as a password login answers: cookies, minimal user', async (algorithm) => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who, { algorithm })
    const response = await signInWith(app.current, authenticator, {}, { 'x-device-category': 'MOBILE' })
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body).toEqual({
      accessExpiresIn: expect.any(Number),
      refreshExpiresIn: expect.any(Number),
      user: { id: who.user.id, userLoginId: who.user.userLoginId, name: expect.any(String), role: 'OWNER', tenantSlug: who.tenant.slug },
    })
    const cookies = Object.fromEntries(response.cookies.map((cookie) => [cookie.name, cookie]))
    expect(cookies.svc_access_token).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' })
    expect(cookies.svc_refresh_token).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' })
    // The cookies alone reach /v1/me.
    const me = await app.current.inject({ method: 'GET', url: '/v1/me', cookies: { svc_access_token: cookies.svc_access_token!.value } })
    expect(me.json()).toMatchObject({ id: who.user.id })
    const sid = decodeJwt(cookies.svc_access_token!.value).sid
    const events = await storedAuditEvents(who.tenant, 'LOGIN_SUCCEEDED')
    expect(events.at(-1)!.details).toEqual({ sessionId: sid, deviceCategory: 'MOBILE', method: 'passkey' })
    const passkey = await owner().selectFrom('passkeys').select(['counter', 'lastUsedAt']).where('userId', '=', who.user.id).executeTakeFirstOrThrow()
    expect(passkey.counter).toBe(1)
    expect(passkey.lastUsedAt).not.toBeNull()
  })

  it('follows the device-session rule: a passkey sign-in replaces the session of the same category', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    const first = await signInWith(app.current, authenticator, {}, { 'x-device-category': 'TABLET' })
    const second = await signInWith(app.current, authenticator, {}, { 'x-device-category': 'TABLET' })
    expect(second.statusCode).toBe(200)
    const firstRefresh = first.cookies.find((cookie) => cookie.name === 'svc_refresh_token')!.value
    const refreshed = await app.current.inject({ method: 'POST', url: '/v1/refresh', cookies: { svc_refresh_token: firstRefresh } })
    expectProblem(refreshed, 401, 'AUTH_017')
  })

  it('needs no second step for a user with a second factor: the passkey stands for both', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    await owner()
      .insertInto('userSecondFactors')
      .values({ tenantId: who.tenant.id, userId: who.user.id, totpSecret: null, totpLastStep: null, totpPendingSecret: null, smsEnabledAt: new Date() })
      .execute()
    const password = await login(app.current, { userLoginId: who.user.userLoginId, password: who.user.password, customId: who.tenant.customId })
    expect(password.response.json()).toMatchObject({ mfaRequired: true })
    const response = await signInWith(app.current, authenticator)
    expect(response.statusCode).toBe(200)
    expect(response.json().user.id).toBe(who.user.id)
  })

  it('leaves the password lockout untouched by passkey failures, and signs in while the password is locked', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    for (let i = 0; i < 5; i++) expectProblem(await signInWith(app.current, authenticator, { userVerified: false }), 401, 'AUTH_001')
    expect(await owner().selectFrom('userLoginFailures').selectAll().where('userId', '=', who.user.id).execute()).toEqual([])
    const byPassword = await login(app.current, { userLoginId: who.user.userLoginId, password: who.user.password, customId: who.tenant.customId })
    expect(byPassword.response.statusCode).toBe(200)
    // Locked by password guesses: the passkey still signs in (a guessed password cannot lock its owner out of it).
    for (let i = 0; i < 3; i++) await login(app.current, { userLoginId: who.user.userLoginId, password: 'wrong-guess-1', customId: who.tenant.customId }, { remoteAddress: uniqueAddress() })
    const locked = await login(app.current, { userLoginId: who.user.userLoginId, password: who.user.password, customId: who.tenant.customId })
    expectProblem(locked.response, 429, 'AUTH_018')
    expect((await signInWith(app.current, authenticator)).statusCode).toBe(200)
  })

  it('audits a refused passkey of a known user as LOGIN_FAILED with method passkey', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    expectProblem(await signInWith(app.current, authenticator, { origin: 'https://evil.example' }), 401, 'AUTH_001')
    const failed = await storedAuditEvents(who.tenant, 'LOGIN_FAILED')
    expect(failed.map((event) => event.details)).toEqual([{ reason: 'PASSKEY_INVALID', method: 'passkey' }])
    expect(failed[0]).toMatchObject({ actorId: null, targetId: String(who.user.id) })
  })

  it('refuses a suspended tenant with AUTH_010 and a suspended or deleted user with AUTH_001, audited', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    await owner().updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', who.user.id).execute()
    expectProblem(await signInWith(app.current, authenticator), 401, 'AUTH_001')
    await owner().updateTable('users').set({ status: 'ACTIVE' }).where('id', '=', who.user.id).execute()
    await owner().updateTable('tenants').set({ status: 'SUSPENDED' }).where('id', '=', who.tenant.id).execute()
    expectProblem(await signInWith(app.current, authenticator), 403, 'AUTH_010')
    expect((await storedAuditEvents(who.tenant, 'LOGIN_FAILED')).map((event) => event.details)).toEqual([
      { reason: 'USER_NOT_ACTIVE', method: 'passkey' },
      { reason: 'TENANT_NOT_ACTIVE', method: 'passkey' },
    ])
    expect(await storedAuditEvents(who.tenant, 'LOGIN_SUCCEEDED')).toHaveLength(1)
  })

  it('refuses an unknown credential with AUTH_001 and audits nothing', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    const stranger = new SoftAuthenticator('ES256', authenticator.origin, authenticator.rpId)
    stranger.userHandle = authenticator.userHandle
    expectProblem(await signInWith(app.current, stranger), 401, 'AUTH_001')
    expect(await storedAuditEvents(who.tenant, 'LOGIN_FAILED')).toEqual([])
  })

  it('answers bad input with 400 VALIDATION_FAILED, never 500', async () => {
    for (const payload of [{}, { challengeId: 'nope', response: {} }, { challengeId: crypto.randomUUID() }]) {
      const response = await app.current.inject({ method: 'POST', url: '/v1/login/passkey', payload, remoteAddress: uniqueAddress() })
      expectProblem(response, 400, 'VALIDATION_FAILED')
    }
    const garbage = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' }, clientExtensionResults: {} }
    const response = await app.current.inject({ method: 'POST', url: '/v1/login/passkey', payload: { challengeId: crypto.randomUUID(), response: garbage }, remoteAddress: uniqueAddress() })
    expectProblem(response, 401, 'AUTH_001')
  })

  it('reads no access token: a stale cookie does not stop a sign-in', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    const asked = (await signInOptions(app.current)).json()
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/login/passkey',
      cookies: { svc_access_token: 'garbage' },
      payload: { challengeId: asked.challengeId, response: authenticator.get(asked) },
      remoteAddress: uniqueAddress(),
    })
    expect(response.statusCode).toBe(200)
  })
})

describe('passkey sign-in address budget', () => {
  const app = useTestApp({ env: { ...PASSKEY_ENV, SVC_LOGIN_IP_PER_MINUTE: '3' } })

  it('spends the per-address budget of login: AUTH_018 beyond it, with Retry-After', async () => {
    const address = uniqueAddress()
    for (let i = 0; i < 3; i++) expect((await signInOptions(app.current, address)).statusCode).toBe(200)
    const over = await signInOptions(app.current, address)
    expectProblem(over, 429, 'AUTH_018')
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
    const assertion = await app.current.inject({ method: 'POST', url: '/v1/login/passkey', payload: {}, remoteAddress: address })
    expectProblem(assertion, 429, 'AUTH_018')
  })
})
