import { describe, expect, it } from 'vitest'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { SoftAuthenticator } from '../support/passkey-authenticator.js'
import { storedAuditEvents, theAuditEvent } from '../audit/audit-fixtures.js'
import { ORIGIN, PASSKEY_ENV, RP_ID, creationOptions, enrol, postPasskey, signedInUser } from './passkey-bed.js'

describe('passkey enrolment (POST /v1/me/passkeys/options, POST /v1/me/passkeys)', () => {
  const app = useTestApp({ env: PASSKEY_ENV })

  it('answers creation options: EdDSA, ES256, RS256, a required resident key and user verification, the RP', async () => {
    const who = await signedInUser(app.current)
    const response = await creationOptions(app.current, who)
    expect(response.statusCode).toBe(200)
    const options = response.json()
    expect(options).toMatchObject({
      rp: { id: RP_ID, name: 'svc' },
      user: { name: who.user.userLoginId },
      pubKeyCredParams: [
        { alg: -8, type: 'public-key' },
        { alg: -7, type: 'public-key' },
        { alg: -257, type: 'public-key' },
      ],
      excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      timeout: 300_000,
      attestation: 'none',
    })
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // The user handle names no login id: 16 opaque bytes.
    expect(Buffer.from(options.user.id, 'base64url')).toHaveLength(16)
    // Stored only as a hash, for this user.
    const rows = await owner().selectFrom('passkeyEnrolmentChallenges').selectAll().where('userId', '=', who.user.id).execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]!.challengeHash).not.toBe(options.challenge)
  })

  it.each(['ES256', 'EdDSA'] as const)('adds an %s passkey with the password: 201, listed, audited PASSKEY_ADDED', async (algorithm) => {
    const who = await signedInUser(app.current)
    const { response } = await enrol(app.current, who, { algorithm, name: 'Phone' })
    expect(response.statusCode).toBe(201)
    const added = response.json()
    expect(added).toEqual({ id: expect.any(Number), name: 'Phone', createdAt: expect.any(String), lastUsedAt: null })
    const listed = await app.current.inject({ method: 'GET', url: '/v1/me/passkeys', cookies: who.cookies })
    expect(listed.json()).toEqual({ items: [added] })
    const event = await theAuditEvent(who.tenant, 'PASSKEY_ADDED')
    expect(event).toMatchObject({ actorId: who.user.id, targetType: 'USER', targetId: String(who.user.id), details: { passkeyId: added.id, name: 'Phone' } })
    // The directory knows the credential, for the sign-in that comes before any tenant.
    const directory = await owner().selectFrom('passkeyDirectory').selectAll().where('tenantId', '=', who.tenant.id).execute()
    expect(directory).toMatchObject([{ userId: who.user.id }])
  })

  it('names a passkey "Passkey" when no name is given, and lists excludeCredentials of the user', async () => {
    const who = await signedInUser(app.current)
    const { authenticator, response } = await enrol(app.current, who)
    expect(response.json().name).toBe('Passkey')
    const options = (await creationOptions(app.current, who)).json()
    expect(options.excludeCredentials).toEqual([{ id: authenticator.credentialId, type: 'public-key', transports: ['internal'] }])
  })

  it('refuses a wrong password with AUTH_013, stores nothing, and counts it as a failed login', async () => {
    const who = await signedInUser(app.current)
    const authenticator = new SoftAuthenticator('ES256', ORIGIN, RP_ID)
    const options = (await creationOptions(app.current, who)).json()
    const response = await postPasskey(app.current, who, { password: 'not-the-password-1', response: authenticator.create(options) })
    expectProblem(response, 400, 'AUTH_013')
    expect(await owner().selectFrom('passkeys').selectAll().where('userId', '=', who.user.id).execute()).toEqual([])
    expect((await storedAuditEvents(who.tenant, 'LOGIN_FAILED')).map((event) => event.details.reason)).toEqual(['WRONG_CURRENT_PASSWORD'])
  })

  it('allows at most 10 passkeys: the options and the 11th answer 409 PASSKEY_LIMIT', async () => {
    const who = await signedInUser(app.current)
    for (let i = 0; i < 10; i++) expect((await enrol(app.current, who)).response.statusCode).toBe(201)
    expectProblem(await creationOptions(app.current, who), 409, 'PASSKEY_LIMIT')
    expect((await owner().selectFrom('passkeys').select('id').where('userId', '=', who.user.id).execute()).length).toBe(10)
  })

  it('refuses the 11th at the final step too, when its options were asked for before the 10th was added', async () => {
    const who = await signedInUser(app.current)
    for (let i = 0; i < 9; i++) expect((await enrol(app.current, who)).response.statusCode).toBe(201)
    const late = new SoftAuthenticator('ES256', ORIGIN, RP_ID)
    const lateOptions = (await creationOptions(app.current, who)).json()
    expect((await enrol(app.current, who)).response.statusCode).toBe(201)
    // The 10th replaced the late challenge (one live challenge per user): asking again is refused by the limit.
    expectProblem(await postPasskey(app.current, who, { password: who.user.password, response: late.create(lateOptions) }), 400, 'PASSKEY_INVALID')
    expectProblem(await creationOptions(app.current, who), 409, 'PASSKEY_LIMIT')
  })

  it('renames a passkey (PATCH) and refuses another user\'s id with 404 PASSKEY_NOT_FOUND', async () => {
    const who = await signedInUser(app.current)
    const other = await signedInUser(app.current, { tenant: who.tenant, role: 'MANAGER' })
    const added = (await enrol(app.current, who)).response.json()
    const renamed = await app.current.inject({ method: 'PATCH', url: `/v1/me/passkeys/${added.id}`, cookies: who.cookies, payload: { name: 'Work laptop' } })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toMatchObject({ id: added.id, name: 'Work laptop' })
    const stolen = await app.current.inject({ method: 'PATCH', url: `/v1/me/passkeys/${added.id}`, cookies: other.cookies, payload: { name: 'Mine' } })
    expectProblem(stolen, 404, 'PASSKEY_NOT_FOUND')
    const blank = await app.current.inject({ method: 'PATCH', url: `/v1/me/passkeys/${added.id}`, cookies: who.cookies, payload: { name: '   ' } })
    expectProblem(blank, 400, 'VALIDATION_FAILED')
  })

  it('removes a passkey with the password (204, PASSKEY_REMOVED, directory entry gone); a wrong password keeps it', async () => {
    const who = await signedInUser(app.current)
    const added = (await enrol(app.current, who)).response.json()
    const remove = (password: string) =>
      app.current.inject({ method: 'DELETE', url: `/v1/me/passkeys/${added.id}`, cookies: who.cookies, remoteAddress: who.address, payload: { password } })
    expectProblem(await remove('wrong-password-9'), 400, 'AUTH_013')
    expect((await remove(who.user.password)).statusCode).toBe(204)
    expectProblem(await remove(who.user.password), 404, 'PASSKEY_NOT_FOUND')
    expect(await owner().selectFrom('passkeyDirectory').selectAll().where('tenantId', '=', who.tenant.id).execute()).toEqual([])
    expect((await theAuditEvent(who.tenant, 'PASSKEY_REMOVED')).details).toEqual({ passkeyId: added.id, reason: 'REMOVED_BY_USER' })
  })

  it('answers bad input with 400 problems, never 500', async () => {
    const who = await signedInUser(app.current)
    for (const payload of [
      {},
      { password: 'x' },
      { password: 'x', response: {} },
      { password: 'x', response: { id: 'a', rawId: 'a', type: 'other', response: {}, clientExtensionResults: {} } },
      { password: 'x', response: { id: '!!', rawId: '!!', type: 'public-key', response: { clientDataJSON: 'a', attestationObject: 'a' }, clientExtensionResults: {} } },
    ]) {
      expectProblem(await postPasskey(app.current, who, payload), 400, 'VALIDATION_FAILED')
    }
    // Well-formed JSON of garbage: the password is right, the response verifies nothing.
    await creationOptions(app.current, who)
    const garbage = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' }, clientExtensionResults: {} }
    expectProblem(await postPasskey(app.current, who, { password: who.user.password, response: garbage }), 400, 'PASSKEY_INVALID')
    expectProblem(await app.current.inject({ method: 'PATCH', url: '/v1/me/passkeys/abc', cookies: who.cookies, payload: { name: 'x' } }), 400, 'VALIDATION_FAILED')
  })

  it('needs a signed-in user: 401 AUTH_002 without a token', async () => {
    expectProblem(await app.current.inject({ method: 'POST', url: '/v1/me/passkeys/options' }), 401, 'AUTH_002')
    expectProblem(await app.current.inject({ method: 'GET', url: '/v1/me/passkeys' }), 401, 'AUTH_002')
  })

  it('lets every role enrol (passkeys are for every user)', async () => {
    const who = await signedInUser(app.current, { role: 'STUDENT' })
    expect((await enrol(app.current, who)).response.statusCode).toBe(201)
  })
})
