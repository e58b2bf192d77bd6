import { describe, expect, it } from 'vitest'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { SoftAuthenticator } from '../support/passkey-authenticator.js'
import { storedAuditEvents } from '../audit/audit-fixtures.js'
import { creationOptions, enrol, ORIGIN, PASSKEY_ENV, postAssertion, postPasskey, RP_ID, signedInUser, signInOptions, signInWith } from './passkey-bed.js'

const passkeysOf = (userId: number) => owner().selectFrom('passkeys').select('id').where('userId', '=', userId).execute()

describe('passkey enrolment attacks', () => {
  const app = useTestApp({ env: PASSKEY_ENV })

  it('refuses a replayed enrolment response: the challenge is single use', async () => {
    const who = await signedInUser(app.current)
    const authenticator = new SoftAuthenticator('ES256', ORIGIN, RP_ID)
    const options = (await creationOptions(app.current, who)).json()
    const response = authenticator.create(options)
    expect((await postPasskey(app.current, who, { password: who.user.password, response })).statusCode).toBe(201)
    // The same response again (after removing the passkey, so only the challenge can stop it).
    await owner().deleteFrom('passkeys').where('userId', '=', who.user.id).execute()
    expectProblem(await postPasskey(app.current, who, { password: who.user.password, response }), 400, 'PASSKEY_INVALID')
    expect(await passkeysOf(who.user.id)).toEqual([])
  })

  it("refuses another user's challenge: one user's options never serve another", async () => {
    const victim = await signedInUser(app.current)
    const attacker = await signedInUser(app.current, { tenant: victim.tenant, role: 'MANAGER' })
    const victimOptions = (await creationOptions(app.current, victim)).json()
    await creationOptions(app.current, attacker)
    const response = new SoftAuthenticator('ES256', ORIGIN, RP_ID).create(victimOptions)
    expectProblem(await postPasskey(app.current, attacker, { password: attacker.user.password, response }), 400, 'PASSKEY_INVALID')
    expect(await passkeysOf(attacker.user.id)).toEqual([])
    // Nor did the attempt use up the victim's challenge.
    expect((await postPasskey(app.current, victim, { password: victim.user.password, response })).statusCode).toBe(201)
  })

  it('refuses an expired challenge (300 s)', async () => {
    const who = await signedInUser(app.current)
    const options = (await creationOptions(app.current, who)).json()
    await owner()
      .updateTable('passkeyEnrolmentChallenges')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where('userId', '=', who.user.id)
      .execute()
    const response = new SoftAuthenticator('ES256', ORIGIN, RP_ID).create(options)
    expectProblem(await postPasskey(app.current, who, { password: who.user.password, response }), 400, 'PASSKEY_INVALID')
  })

  it.each([
    ['a wrong origin', { origin: 'https://evil.example' }],
    ['a wrong RP ID', { rpId: 'evil.example' }],
    ['user verification missing', { userVerified: false }],
    ['a wrong ceremony type', { type: 'webauthn.get' }],
    ['a challenge of its own', { challenge: Buffer.from('forged challenge of 32 bytes.....').toString('base64url') }],
  ])('refuses %s with 400 PASSKEY_INVALID and stores nothing', async (_name, tweaks) => {
    const who = await signedInUser(app.current)
    const { response } = await enrol(app.current, who, { tweaks })
    expectProblem(response, 400, 'PASSKEY_INVALID')
    expect(await passkeysOf(who.user.id)).toEqual([])
    expect(await storedAuditEvents(who.tenant, 'PASSKEY_ADDED')).toEqual([])
  })

  it("refuses a credential id another tenant's user holds (a forged response cannot take over a passkey)", async () => {
    const victim = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, victim)
    const attacker = await signedInUser(app.current)
    const copy = new SoftAuthenticator('ES256', ORIGIN, RP_ID, { credentialId: authenticator.credentialId })
    const options = (await creationOptions(app.current, attacker)).json()
    expectProblem(await postPasskey(app.current, attacker, { password: attacker.user.password, response: copy.create(options) }), 400, 'PASSKEY_INVALID')
    expect(await passkeysOf(attacker.user.id)).toEqual([])
    // The victim's passkey still signs the victim in.
    const signedIn = await signInWith(app.current, authenticator)
    expect(signedIn.json().user.id).toBe(victim.user.id)
  })

  it('refuses enrolment and removal from another site (CSRF): 403 CSRF_ORIGIN_REJECTED, nothing changed', async () => {
    const who = await signedInUser(app.current)
    const added = (await enrol(app.current, who)).response.json()
    const evil = { origin: 'https://evil.example' }
    const options = await app.current.inject({ method: 'POST', url: '/v1/me/passkeys/options', cookies: who.cookies, headers: evil })
    expectProblem(options, 403, 'CSRF_ORIGIN_REJECTED')
    const ownOptions = (await creationOptions(app.current, who)).json()
    const response = new SoftAuthenticator('ES256', ORIGIN, RP_ID).create(ownOptions)
    expectProblem(await postPasskey(app.current, who, { password: who.user.password, response }, evil), 403, 'CSRF_ORIGIN_REJECTED')
    const removal = await app.current.inject({
      method: 'DELETE',
      url: `/v1/me/passkeys/${added.id}`,
      cookies: who.cookies,
      headers: { 'sec-fetch-site': 'cross-site' },
      payload: { password: who.user.password },
    })
    expectProblem(removal, 403, 'CSRF_ORIGIN_REJECTED')
    const rename = await app.current.inject({ method: 'PATCH', url: `/v1/me/passkeys/${added.id}`, cookies: who.cookies, headers: evil, payload: { name: 'x' } })
    expectProblem(rename, 403, 'CSRF_ORIGIN_REJECTED')
    expect(await passkeysOf(who.user.id)).toEqual([{ id: added.id }])
  })
})

describe('passkey sign-in attacks', () => {
  const app = useTestApp({ env: PASSKEY_ENV })

  it('refuses a replayed assertion: the sign-in challenge is single use', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    const options = (await signInOptions(app.current)).json()
    const body = { challengeId: options.challengeId, response: authenticator.get(options) }
    expect((await postAssertion(app.current, body)).statusCode).toBe(200)
    expectProblem(await postAssertion(app.current, body), 401, 'AUTH_001')
    // A fresh assertion over the used challenge (a higher counter) fails too.
    expectProblem(await postAssertion(app.current, { challengeId: options.challengeId, response: authenticator.get(options) }), 401, 'AUTH_001')
  })

  it('refuses an assertion over another challengeId\'s challenge, and uses that challengeId up', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    const first = (await signInOptions(app.current)).json()
    const second = (await signInOptions(app.current)).json()
    expectProblem(await postAssertion(app.current, { challengeId: second.challengeId, response: authenticator.get(first) }), 401, 'AUTH_001')
    expectProblem(await postAssertion(app.current, { challengeId: second.challengeId, response: authenticator.get(second) }), 401, 'AUTH_001')
    expect((await postAssertion(app.current, { challengeId: first.challengeId, response: authenticator.get(first) })).statusCode).toBe(200)
  })

  it('refuses an expired sign-in challenge', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    const options = (await signInOptions(app.current)).json()
    await owner().updateTable('passkeySignInChallenges').set({ expiresAt: new Date(Date.now() - 1000) }).where('id', '=', options.challengeId).execute()
    expectProblem(await postAssertion(app.current, { challengeId: options.challengeId, response: authenticator.get(options) }), 401, 'AUTH_001')
  })

  it.each([
    ['a wrong origin', { origin: 'https://evil.example' }],
    ['a wrong RP ID', { rpId: 'evil.example' }],
    ['user verification missing', { userVerified: false }],
    ['a wrong ceremony type', { type: 'webauthn.create' }],
  ])('refuses %s with 401 AUTH_001, no session', async (_name, tweaks) => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    const response = await signInWith(app.current, authenticator, tweaks)
    expectProblem(response, 401, 'AUTH_001')
    expect(response.cookies.filter((cookie) => cookie.name === 'svc_access_token')).toEqual([])
    expect(await storedAuditEvents(who.tenant, 'LOGIN_SUCCEEDED')).toHaveLength(1)
  })

  it('refuses a signature by another key under a known credential id (another user\'s credential)', async () => {
    const victim = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, victim)
    const attacker = await signedInUser(app.current)
    const forged = new SoftAuthenticator('ES256', ORIGIN, RP_ID, { credentialId: authenticator.credentialId })
    forged.userHandle = authenticator.userHandle
    expectProblem(await signInWith(app.current, forged), 401, 'AUTH_001')
    // Nor does the attacker's own passkey carry the victim's user handle into the victim's account.
    const own = (await enrol(app.current, attacker)).authenticator
    own.userHandle = authenticator.userHandle
    expectProblem(await signInWith(app.current, own), 401, 'AUTH_001')
  })

  it('refuses a counter that went backwards (both counters non-zero); an authenticator without a counter (0) is fine', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    expect((await signInWith(app.current, authenticator, { counter: 10 })).statusCode).toBe(200)
    expectProblem(await signInWith(app.current, authenticator, { counter: 5 }), 401, 'AUTH_001')
    expectProblem(await signInWith(app.current, authenticator, { counter: 10 }), 401, 'AUTH_001')
    expect((await signInWith(app.current, authenticator, { counter: 11 })).statusCode).toBe(200)
    // A zero counter is no counter (the rule needs both non-zero): accepted, and the stored one is never lowered.
    expect((await signInWith(app.current, authenticator, { counter: 0 })).statusCode).toBe(200)
    const stored = await owner().selectFrom('passkeys').select('counter').where('userId', '=', who.user.id).executeTakeFirstOrThrow()
    expect(stored.counter).toBe(11)
    expectProblem(await signInWith(app.current, authenticator, { counter: 11 }), 401, 'AUTH_001')

    const counterless = await signedInUser(app.current)
    const zero = (await enrol(app.current, counterless)).authenticator
    for (let i = 0; i < 2; i++) expect((await signInWith(app.current, zero, { counter: 0 })).statusCode).toBe(200)
  })

  it('refuses a removed passkey', async () => {
    const who = await signedInUser(app.current)
    const { authenticator, response } = await enrol(app.current, who)
    // On another device category, so the password session of `who` stays.
    expect((await signInWith(app.current, authenticator, {}, { 'x-device-category': 'MOBILE' })).statusCode).toBe(200)
    const removed = await app.current.inject({
      method: 'DELETE',
      url: `/v1/me/passkeys/${response.json().id}`,
      cookies: who.cookies,
      remoteAddress: who.address,
      payload: { password: who.user.password },
    })
    expect(removed.statusCode).toBe(204)
    expectProblem(await signInWith(app.current, authenticator), 401, 'AUTH_001')
  })

  it("answers the same for an unknown credential and a refused known one (no tenant or user is told apart)", async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    const unknown = await signInWith(app.current, new SoftAuthenticator('ES256', ORIGIN, RP_ID))
    const refused = await signInWith(app.current, authenticator, { origin: 'https://evil.example' })
    const strip = ({ requestId: _requestId, ...body }: Record<string, unknown>) => body
    expect(strip(unknown.json())).toEqual(strip(refused.json()))
    expect(unknown.statusCode).toBe(refused.statusCode)
  })
})
