import { createPrivateKey, createPublicKey, createSecretKey, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { decodeProtectedHeader, exportJWK, SignJWT, UnsecuredJWT, type JWTHeaderParameters } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSigningKey, type PrivateSigningJwk } from '../../lib/sign-in/generate-signing-key.js'
import { SIGNING_ALGORITHMS, type PublicJwk, type SigningAlgorithm } from '../../lib/sign-in/signing-keys.js'
import { decodeJwt, expectAppError, expectProblem, insertUserWithPassword, login, refresh } from '../support/auth-fixtures.js'
import { createTenant } from '../support/fixtures.js'
import { TEST_JWT_SECRET, useTestApp } from '../support/helper.js'

// Attacks on the service's tokens, each tried three ways: as the Bearer token of GET /v1/me and of the in-process
// contract's validateToken (AUTH_003), and as the refresh cookie of POST /v1/refresh (AUTH_006). A forged token
// carries the exact claims of a real token of a signed-in user, so nothing but the attack can make it fail; positive
// controls in the same suites show that a token signed the right way with those claims does pass.

type Claims = Record<string, unknown>
/** Turns the claims of a real token into a forged token carrying them. */
type Forge = (claims: Claims) => string | Promise<string>
type Tokens = { access: string; refresh: string }

interface Session extends Tokens {
  userId: number
  accessClaims: Claims
  refreshClaims: Claims
}

const ASYMMETRIC_ALGORITHMS = ['EdDSA', 'ES256', 'RS256'] as const

/** One key of each algorithm, with `first` (the one that signs) first. */
function keySet(first: SigningAlgorithm): Promise<PrivateSigningJwk[]> {
  return Promise.all([first, ...SIGNING_ALGORITHMS.filter((alg) => alg !== first)].map((alg) => generateSigningKey(alg)))
}

const keysSetting = (keys: readonly PrivateSigningJwk[]) => JSON.stringify({ keys })

/** What jose signs with for a private JWK of the set, or of an attacker. */
function privateKeyOf(jwk: PrivateSigningJwk): KeyObject {
  if (jwk.alg === 'HS256') return createSecretKey(Buffer.from(jwk.k ?? '', 'base64url'))
  return createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' })
}

const secretOf = (text: string) => createSecretKey(Buffer.from(text))

function signWith(key: KeyObject | Uint8Array, header: Record<string, unknown>, claims: Claims): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header as JWTHeaderParameters).sign(key)
}

const base64urlJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
/** `header.payload.`: an unsecured token, built by hand because jose writes only the lower-case `none`. */
const unsecured = (header: Record<string, unknown>, claims: Claims) => `${base64urlJson(header)}.${base64urlJson(claims)}.`

async function signIn(app: FastifyInstance): Promise<Session> {
  const tenant = await createTenant()
  const user = await insertUserWithPassword(tenant)
  const result = await login(app, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
  expect(result.response.statusCode).toBe(200)
  return {
    userId: user.id,
    access: result.accessToken,
    refresh: result.refreshToken,
    accessClaims: decodeJwt(result.accessToken),
    refreshClaims: decodeJwt(result.refreshToken),
  }
}

const getMe = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } })


/** Refused all three ways: as access token by GET /v1/me and validateToken, as refresh token by POST /v1/refresh. */
async function expectRefused(app: FastifyInstance, tokens: Tokens): Promise<void> {
  expectProblem(await getMe(app, tokens.access), 401, 'AUTH_003')
  await expectAppError(app.authContract.validateToken(tokens.access), 'AUTH_003')
  expectProblem((await refresh(app, tokens.refresh)).response, 401, 'AUTH_006')
}

/** The attack applied to the claims of the session's real access and refresh tokens, refused all three ways. */
async function expectForgeryRefused(app: FastifyInstance, session: Session, forge: Forge): Promise<void> {
  const tokens = { access: await forge(session.accessClaims), refresh: await forge(session.refreshClaims) }
  expect(decodeJwt(tokens.access)).toEqual(session.accessClaims)
  expect(decodeJwt(tokens.refresh)).toEqual(session.refreshClaims)
  await expectRefused(app, tokens)
}

/** Accepted all three ways (the refresh rotates the session, so a control uses a session of its own). */
async function expectAccepted(app: FastifyInstance, session: Session, tokens: Tokens): Promise<void> {
  const me = await getMe(app, tokens.access)
  expect(me.statusCode).toBe(200)
  expect(me.json()).toMatchObject({ id: session.userId })
  await expect(app.authContract.validateToken(tokens.access)).resolves.toMatchObject({
    userId: session.userId,
    jti: session.accessClaims.jti,
  })
  expect((await refresh(app, tokens.refresh)).response.statusCode).toBe(200)
}

/** Both of the session's tokens forged the same way, for a control that expects them to pass. */
async function forgedPair(session: Session, forge: Forge): Promise<Tokens> {
  return { access: await forge(session.accessClaims), refresh: await forge(session.refreshClaims) }
}

const HMAC_FORMS = ['its JWK JSON text as served', 'its SPKI PEM text', 'its SPKI DER bytes', 'its raw x or n'] as const
type HmacForm = (typeof HMAC_FORMS)[number]

/** A published public key in the forms an attacker might try as an HMAC secret. */
function hmacSecretsFrom(jwk: PublicJwk): Record<HmacForm, Uint8Array> {
  const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
  return {
    'its JWK JSON text as served': Buffer.from(JSON.stringify(jwk)),
    'its SPKI PEM text': Buffer.from(key.export({ type: 'spki', format: 'pem' }) as string),
    'its SPKI DER bytes': key.export({ type: 'spki', format: 'der' }),
    'its raw x or n': Buffer.from(jwk.x ?? jwk.n ?? '', 'base64url'),
  }
}

/** A server standing in for the attacker's key host; it records every request it receives. */
async function attackerKeyHost(jwks: unknown, certificatePem: string): Promise<{ server: Server; base: string; requests: string[] }> {
  const requests: string[] = []
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`)
    if (request.url === '/cert.pem') response.writeHead(200, { 'content-type': 'application/x-pem-file' }).end(certificatePem)
    else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}

describe.each(SIGNING_ALGORITHMS)('token attacks on a service whose key set signs with its %s key', (firstAlg) => {
  let keys: PrivateSigningJwk[]
  // The attacker's own key of each algorithm: right type and size, wrong key.
  let attackers: Record<SigningAlgorithm, PrivateSigningJwk>
  // The target of the refused attacks; nothing ever rotates it.
  let victim: Session

  const first = () => keys[0] as PrivateSigningJwk
  const keyOf = (alg: SigningAlgorithm) => keys.find((key) => key.alg === alg) as PrivateSigningJwk

  beforeAll(async () => {
    keys = await keySet(firstAlg)
    const attackerKeys = await Promise.all(SIGNING_ALGORITHMS.map((alg) => generateSigningKey(alg)))
    attackers = Object.fromEntries(attackerKeys.map((key) => [key.alg, key])) as Record<SigningAlgorithm, PrivateSigningJwk>
    // testEnv keeps SVC_JWT_SECRET set, so kid-less HS256 tokens signed with it still verify.
  })
  const app = useTestApp(() => ({ env: { SVC_JWT_KEYS: keysSetting(keys) } }))
  beforeAll(async () => {
    victim = await signIn(app.current)
  })

  describe('positive controls', () => {
    it('signs with its first key under its kid and accepts its genuine tokens all three ways', async () => {
      const session = await signIn(app.current)
      expect(decodeProtectedHeader(session.access)).toEqual({ alg: firstAlg, kid: first().kid, typ: 'JWT' })
      expect(decodeProtectedHeader(session.refresh)).toEqual({ alg: firstAlg, kid: first().kid, typ: 'JWT' })
      await expectAccepted(app.current, session, session)
    })

    it('accepts a kid-less HS256 token signed with SVC_JWT_SECRET while the secret is set', async () => {
      const session = await signIn(app.current)
      const tokens = await forgedPair(session, (claims) => signWith(secretOf(TEST_JWT_SECRET), { alg: 'HS256', typ: 'JWT' }, claims))
      await expectAccepted(app.current, session, tokens)
    })

    it.each(SIGNING_ALGORITHMS)('accepts a token signed by its %s key with a header of only alg, kid and typ', async (alg) => {
      const session = await signIn(app.current)
      const key = keyOf(alg)
      const tokens = await forgedPair(session, (claims) => signWith(privateKeyOf(key), { alg, kid: key.kid, typ: 'JWT' }, claims))
      await expectAccepted(app.current, session, tokens)
    })
  })

  describe('algorithm confusion: an HS256 token whose secret is a published public key', () => {
    it('publishes every asymmetric key of the set, and no HS256 key', async () => {
      const served = (await app.current.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys as PublicJwk[]
      expect(served.map((jwk) => jwk.kid)).toEqual(keys.filter((key) => key.alg !== 'HS256').map((key) => key.kid))
    })

    it.each(ASYMMETRIC_ALGORITHMS.flatMap((alg) => HMAC_FORMS.map((form) => [alg, form] as const)))(
      'refuses one naming the published %s key by its kid, keyed with %s',
      async (alg, form) => {
        const response = await app.current.inject({ method: 'GET', url: '/.well-known/jwks.json' })
        const published = (response.json().keys as PublicJwk[]).find((jwk) => jwk.alg === alg) as PublicJwk
        expect(published.kid).toBe(keyOf(alg).kid)
        // The JWK text is exactly what the attacker downloads.
        expect(response.body).toContain(JSON.stringify(published))
        const secret = hmacSecretsFrom(published)[form]
        await expectForgeryRefused(app.current, victim, (claims) => signWith(secret, { alg: 'HS256', kid: published.kid, typ: 'JWT' }, claims))
      },
    )
  })

  describe('alg none', () => {
    it('refuses an unsecured token with alg none and no kid (as jose writes it)', async () => {
      await expectForgeryRefused(app.current, victim, (claims) => new UnsecuredJWT(claims).encode())
    })

    it.each(['none', 'None', 'NONE'])('refuses an unsecured token with alg %s, with and without a kid', async (alg) => {
      await expectForgeryRefused(app.current, victim, (claims) => unsecured({ alg, typ: 'JWT' }, claims))
      await expectForgeryRefused(app.current, victim, (claims) => unsecured({ alg, kid: first().kid, typ: 'JWT' }, claims))
    })
  })

  describe('unknown kid and wrong key', () => {
    it('refuses a token signed by an attacker EdDSA key under a kid the set does not have', async () => {
      const kid = `attacker-${randomBytes(6).toString('hex')}`
      await expectForgeryRefused(app.current, victim, (claims) => signWith(privateKeyOf(attackers.EdDSA), { alg: 'EdDSA', kid, typ: 'JWT' }, claims))
    })

    it.each(SIGNING_ALGORITHMS)('refuses a token under the real %s kid signed by an attacker key of that algorithm', async (alg) => {
      const kid = keyOf(alg).kid
      await expectForgeryRefused(app.current, victim, (claims) => signWith(privateKeyOf(attackers[alg]), { alg, kid, typ: 'JWT' }, claims))
    })

    // The real private key, another algorithm of its family: only the algorithm written on the key is admitted.
    it.each([
      ['RS256', 'PS256'],
      ['RS256', 'RS384'],
      ['RS256', 'RS512'],
      ['HS256', 'HS384'],
      ['HS256', 'HS512'],
    ] as const)('refuses a token under the real %s kid signed by that very key with %s', async (keyAlg, tokenAlg) => {
      const key = keyOf(keyAlg)
      await expectForgeryRefused(app.current, victim, (claims) => signWith(privateKeyOf(key), { alg: tokenAlg, kid: key.kid, typ: 'JWT' }, claims))
    })

    it('refuses a kid-less token signed by its first key with that key\'s algorithm, though the secret is set', async () => {
      await expectForgeryRefused(app.current, victim, (claims) => signWith(privateKeyOf(first()), { alg: firstAlg, typ: 'JWT' }, claims))
    })
  })

  describe('a kid naming a removed key', () => {

    const reduced = useTestApp(() => ({ env: { SVC_JWT_KEYS: keysSetting(keys.slice(1)) } }))

    it('refuses, on an instance whose set no longer has the first key, the tokens that key signed', async () => {
      const signedBefore = await signIn(app.current)
      expect(decodeProtectedHeader(signedBefore.access).kid).toBe(first().kid)
      await expectRefused(reduced.current, signedBefore)
      const served = (await reduced.current.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys as PublicJwk[]
      expect(served.map((jwk) => jwk.kid)).not.toContain(first().kid)
      // Where the key remains the same tokens pass: the removal alone refused them.
      await expectAccepted(app.current, signedBefore, signedBefore)
    })
  })

  describe('keys named or carried in the header (jwk, jku, x5u, x5c, crit)', () => {
    let host: Awaited<ReturnType<typeof attackerKeyHost>>
    let attackerPublicJwk: Record<string, unknown>
    let attackerSpki: KeyObject

    beforeAll(async () => {
      attackerSpki = createPublicKey(privateKeyOf(attackers.EdDSA))
      attackerPublicJwk = { ...(await exportJWK(attackerSpki)), alg: 'EdDSA', use: 'sig', kid: attackers.EdDSA.kid }
      host = await attackerKeyHost({ keys: [attackerPublicJwk] }, attackerSpki.export({ type: 'spki', format: 'pem' }) as string)
      // The host answers and counts: a fetch by the service could not go unseen.
      const served = await fetch(`${host.base}/jwks.json`)
      expect(await served.json()).toEqual({ keys: [attackerPublicJwk] })
      expect(host.requests).toEqual(['GET /jwks.json'])
      host.requests.length = 0
    })
    afterAll(async () => {
      await new Promise((resolve) => host?.server.close(resolve))
    })

    const attackerSigned = (header: Record<string, unknown>): Forge => (claims) => signWith(privateKeyOf(attackers.EdDSA), header, claims)
    const kids = () => [
      ['an unknown kid', attackers.EdDSA.kid],
      ['the real EdDSA kid', keyOf('EdDSA').kid],
    ] as const

    it('refuses a token signed by the attacker key that embeds its public JWK, under an unknown or a real kid', async () => {
      for (const [, kid] of kids()) {
        await expectForgeryRefused(app.current, victim, attackerSigned({ alg: 'EdDSA', kid, typ: 'JWT', jwk: attackerPublicJwk }))
      }
    })

    it.each([
      ['jku', '/jwks.json'],
      ['x5u', '/cert.pem'],
    ])('refuses a token signed by the attacker key whose %s points at the attacker, and never fetches it', async (member, path) => {
      for (const [, kid] of kids()) {
        await expectForgeryRefused(app.current, victim, attackerSigned({ alg: 'EdDSA', kid, typ: 'JWT', [member]: `${host.base}${path}` }))
      }
      expect(host.requests).toEqual([])
    })

    // Signed by the service's real first key with otherwise perfect claims: only the extra header member is wrong.
    // jose itself would verify every one of these (crit names b64, a parameter it understands).
    const extraMembers = (): Array<[string, Record<string, unknown>]> => [
      ['jku', { jku: `${host.base}/jwks.json` }],
      ['x5u', { x5u: `${host.base}/cert.pem` }],
      ['jwk', { jwk: attackerPublicJwk }],
      ['x5c', { x5c: [(attackerSpki.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64')] }],
      ['crit', { crit: ['b64'], b64: true }],
    ]

    it.each(['jku', 'x5u', 'jwk', 'x5c', 'crit'])('refuses a token signed by its own first key whose header adds %s', async (name) => {
      const [, extra] = extraMembers().find(([member]) => member === name) as [string, Record<string, unknown>]
      const header = { alg: firstAlg, kid: first().kid, typ: 'JWT', ...extra }
      await expectForgeryRefused(app.current, victim, (claims) => signWith(privateKeyOf(first()), header, claims))
      expect(host.requests).toEqual([])
    })
  })

  describe('a token of one type presented as the other', () => {
    it('refuses a refresh token presented as an access token', async () => {
      expectProblem(await getMe(app.current, victim.refresh), 401, 'AUTH_003')
      await expectAppError(app.current.authContract.validateToken(victim.refresh), 'AUTH_003')
    })

    it('refuses an access token presented as a refresh token', async () => {
      expectProblem((await refresh(app.current, victim.access)).response, 401, 'AUTH_006')
    })
  })

  describe('tampering', () => {
    const withPayload = (token: string, payload: string) => {
      const [header, , signature] = token.split('.')
      return `${header}.${Buffer.from(payload).toString('base64url')}.${signature}`
    }
    const payloadText = (token: string) => Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')

    it('refuses a real token whose payload names another role, its signature kept', async () => {
      const promote = (token: string) => withPayload(token, JSON.stringify({ ...decodeJwt(token), role: 'OWNER' }))
      expect(victim.accessClaims.role).toBe('STUDENT')
      await expectRefused(app.current, { access: promote(victim.access), refresh: promote(victim.refresh) })
    })

    it('refuses a real token with one character of its payload changed', async () => {
      // The last digit of the subject: another user id, one character apart.
      const changeOne = (token: string) => {
        const text = payloadText(token)
        const at = text.indexOf('"sub":"') + '"sub":"'.length + String(victim.userId).length - 1
        const digit = text[at] as string
        return withPayload(token, `${text.slice(0, at)}${digit === '9' ? '8' : String(Number(digit) + 1)}${text.slice(at + 1)}`)
      }
      expect(decodeJwt(changeOne(victim.access)).sub).not.toBe(victim.accessClaims.sub)
      await expectRefused(app.current, { access: changeOne(victim.access), refresh: changeOne(victim.refresh) })
    })

    it('refuses a real token carrying the signature of another real token', async () => {
      const other = await signIn(app.current)
      const withSignatureOf = (token: string, donor: string) => `${token.split('.').slice(0, 2).join('.')}.${donor.split('.')[2]}`
      await expectRefused(app.current, { access: withSignatureOf(victim.access, other.access), refresh: withSignatureOf(victim.refresh, other.refresh) })
    })

    it('refuses a kid-less HS256 token signed with a wrong secret', async () => {
      const wrong = secretOf(`not-${TEST_JWT_SECRET}`)
      await expectForgeryRefused(app.current, victim, (claims) => signWith(wrong, { alg: 'HS256', typ: 'JWT' }, claims))
    })
  })

  describe('with the key set only (no SVC_JWT_SECRET)', () => {
    let target: Session

    const keysOnly = useTestApp(() => ({ env: { SVC_JWT_KEYS: keysSetting(keys), SVC_JWT_SECRET: undefined } }))
    beforeAll(async () => {
      target = await signIn(keysOnly.current)
    })

    it('accepts its genuine tokens (control)', async () => {
      const session = await signIn(keysOnly.current)
      await expectAccepted(keysOnly.current, session, session)
    })

    it('refuses a kid-less token even when its first key signs it with that key\'s algorithm', async () => {
      await expectForgeryRefused(keysOnly.current, target, (claims) => signWith(privateKeyOf(first()), { alg: firstAlg, typ: 'JWT' }, claims))
    })

    it('refuses a kid-less HS256 token signed with a secret it was not given', async () => {
      await expectForgeryRefused(keysOnly.current, target, (claims) => signWith(secretOf(TEST_JWT_SECRET), { alg: 'HS256', typ: 'JWT' }, claims))
    })
  })
})
