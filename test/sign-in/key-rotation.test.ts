import type { FastifyInstance } from 'fastify'
import { decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSigningKey, type PrivateSigningJwk } from '../../lib/sign-in/generate-signing-key.js'
import { decodeJwt, expectAppError, expectProblem, insertUserWithPassword, login, refresh, uniqueAddress } from '../support/auth-fixtures.js'
import { createTenant, type TenantRow } from '../support/fixtures.js'
import { buildTestApp } from '../support/helper.js'

/**
 * The procedure of docs/operations.md#rotating-signing-keys, run for real: every configuration of a roll is an
 * instance of the production app, and all of them share one database, as the instances of a deployment do. The
 * steps of a describe block run in order and share the tokens the earlier steps issued, as the procedure does.
 */

interface Session {
  userId: number
  access: string
  refresh: string
}

type Overrides = Record<string, string | undefined>

const keySet = (...keys: object[]) => JSON.stringify({ keys })
/** The JWKS entry of a key: everything but its private member `d`. */
const published = ({ d: _private, ...rest }: PrivateSigningJwk) => rest

let tenant: TenantRow
let K1: PrivateSigningJwk
let K2: PrivateSigningJwk
const built = new Map<string, Promise<FastifyInstance>>()

beforeAll(async () => {
  tenant = await createTenant()
  // Different algorithms on purpose: a rotation may also change the algorithm.
  K1 = await generateSigningKey('EdDSA')
  K2 = await generateSigningKey('ES256')
})

afterAll(async () => {
  const apps = await Promise.allSettled(built.values())
  await Promise.all(apps.map((app) => (app.status === 'fulfilled' ? app.value.close() : undefined)))
})

/** The instance of one configuration, built once and reused by every step that runs it. */
function instance(name: string, overrides: () => Overrides): Promise<FastifyInstance> {
  let app = built.get(name)
  if (!app) {
    app = buildTestApp(overrides())
    built.set(name, app)
  }
  return app
}

const noSecret = { SVC_JWT_SECRET: undefined }
const configs = {
  secretOnly: () => instance('secret only', () => ({})),
  // key_ops ["verify"]: published and trusted, never the signer; the secret keeps signing.
  secretAndK1VerifyOnly: () => instance('secret + [K1 verify-only]', () => ({ SVC_JWT_KEYS: keySet({ ...K1, key_ops: ['verify'] }) })),
  secretAndK1: () => instance('secret + [K1]', () => ({ SVC_JWT_KEYS: keySet(K1) })),
  K1: () => instance('[K1]', () => ({ ...noSecret, SVC_JWT_KEYS: keySet(K1) })),
  K1K2: () => instance('[K1, K2]', () => ({ ...noSecret, SVC_JWT_KEYS: keySet(K1, K2) })),
  K2K1: () => instance('[K2, K1]', () => ({ ...noSecret, SVC_JWT_KEYS: keySet(K2, K1) })),
  K2: () => instance('[K2]', () => ({ ...noSecret, SVC_JWT_KEYS: keySet(K2) })),
}

/** A real sign-in through POST /v1/login of a user of its own (one session per user and device). */
async function signIn(app: FastifyInstance): Promise<Session> {
  const user = await insertUserWithPassword(tenant)
  const signedIn = await login(
    app,
    { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId },
    { remoteAddress: uniqueAddress() },
  )
  expect(signedIn.response.statusCode).toBe(200)
  return { userId: user.id, access: signedIn.accessToken, refresh: signedIn.refreshToken }
}

/**
 * Sessions signed in on one instance at one step. A refresh consumes its token (a second use is reuse, AUTH_016),
 * so every check takes a session nobody has used.
 */
class Issued {
  private readonly unused: Session[]

  private constructor(sessions: Session[]) {
    this.unused = sessions
  }

  static async on(app: FastifyInstance, count: number): Promise<Issued> {
    const sessions: Session[] = []
    for (let i = 0; i < count; i++) sessions.push(await signIn(app))
    return new Issued(sessions)
  }

  /** Every session's access and refresh token as the instance signed them. */
  get tokens(): string[] {
    return this.unused.flatMap((session) => [session.access, session.refresh])
  }

  take(): Session {
    const session = this.unused.pop()
    if (!session) throw new Error('every session of this step is used: sign in more at that step')
    return session
  }
}

/** The header the service writes: `{alg, kid, typ}` of its signer, or `{alg: 'HS256', typ}` with the secret. */
const header = (token: string) => decodeProtectedHeader(token)
const signedBy = (key: PrivateSigningJwk) => ({ alg: key.alg, kid: key.kid, typ: 'JWT' })

const getMe = (app: FastifyInstance, access: string) =>
  app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${access}` } })

/**
 * The session is accepted everywhere a token is checked: GET /v1/me, the in-process contract, and POST /v1/refresh,
 * which answers with the pair the instance signs now.
 */
async function expectAccepted(app: FastifyInstance, session: Session): Promise<Session> {
  const me = await getMe(app, session.access)
  expect(me.statusCode).toBe(200)
  expect(me.json()).toMatchObject({ id: session.userId })
  expect(await app.authContract.validateToken(session.access)).toMatchObject({
    userId: session.userId,
    sid: decodeJwt(session.access).sid,
  })
  const renewed = await refresh(app, session.refresh, { remoteAddress: uniqueAddress() })
  expect(renewed.response.statusCode).toBe(200)
  return { userId: session.userId, access: renewed.accessToken, refresh: renewed.refreshToken }
}

/** The session's key is unknown here: AUTH_003 for the access token (HTTP and contract), AUTH_006 for the refresh. */
async function expectRefused(app: FastifyInstance, session: Session): Promise<void> {
  expectProblem(await getMe(app, session.access), 401, 'AUTH_003')
  await expectAppError(app.authContract.validateToken(session.access), 'AUTH_003')
  expectProblem((await refresh(app, session.refresh, { remoteAddress: uniqueAddress() })).response, 401, 'AUTH_006')
}

async function publishedKeys(app: FastifyInstance) {
  const response = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
  expect(response.statusCode).toBe(200)
  return response.json().keys
}

describe('rotating from K1 to K2 without ending a session', () => {
  let fromA: Issued
  let fromB: Issued
  let fromC: Issued
  let fromCByB: Issued
  let renewedOnC: Session

  it('A [K1]: signs in with K1 and publishes K1 only', async () => {
    const a = await configs.K1()
    fromA = await Issued.on(a, 6)
    for (const token of fromA.tokens) expect(header(token)).toEqual(signedBy(K1))
    expect(await publishedKeys(a)).toEqual([published(K1)])
    await expectAccepted(a, fromA.take())
  })

  it('B [K1, K2] (K2 added as second): accepts A tokens, still signs with K1 and publishes both keys', async () => {
    const b = await configs.K1K2()
    const renewed = await expectAccepted(b, fromA.take())
    expect([header(renewed.access), header(renewed.refresh)]).toEqual([signedBy(K1), signedBy(K1)])

    fromB = await Issued.on(b, 3)
    for (const token of fromB.tokens) expect(header(token)).toEqual(signedBy(K1))
    expect(await publishedKeys(b)).toEqual([published(K1), published(K2)])
  })

  it('B roll: an A instance still up accepts what a B instance signed, and the reverse', async () => {
    const [a, b] = [await configs.K1(), await configs.K1K2()]
    await expectAccepted(a, fromB.take())
    await expectAccepted(b, fromA.take())
  })

  it('C [K2, K1] (K2 promoted): accepts A and B tokens, signs with K2 and publishes K2 then K1', async () => {
    const c = await configs.K2K1()
    await expectAccepted(c, fromA.take())
    await expectAccepted(c, fromB.take())
    // A session that refreshes on a promoted instance moves to K2, so it survives K1's removal.
    renewedOnC = await expectAccepted(c, fromA.take())
    expect([header(renewedOnC.access), header(renewedOnC.refresh)]).toEqual([signedBy(K2), signedBy(K2)])

    fromC = await Issued.on(c, 3)
    for (const token of fromC.tokens) expect(header(token)).toEqual(signedBy(K2))
    expect(await publishedKeys(c)).toEqual([published(K2), published(K1)])
  })

  it('C roll: a B instance still up accepts what a C instance signed, and a C instance what a B instance signed', async () => {
    const [b, c] = [await configs.K1K2(), await configs.K2K1()]
    await expectAccepted(b, fromC.take())
    // B instances keep signing with K1 until they are replaced.
    fromCByB = await Issued.on(b, 2)
    for (const token of fromCByB.tokens) expect(header(token)).toEqual(signedBy(K1))
    await expectAccepted(c, fromCByB.take())
  })

  it('why K2 goes in second first: an instance that does not know K2 refuses K2 tokens (AUTH_003, AUTH_006)', async () => {
    // Promoting K2 straight from [K1] would leave the [K1] instances of the roll refusing every token a promoted
    // instance signs: sessions would fail at random until the roll ends.
    await expectRefused(await configs.K1(), fromC.take())
  })

  it('D [K2] (K1 removed after the refresh lifetime): refuses every K1 token and accepts K2 tokens', async () => {
    const d = await configs.K2()
    await expectRefused(d, fromA.take())
    await expectRefused(d, fromB.take())
    await expectRefused(d, fromCByB.take())
    await expectAccepted(d, fromC.take())
    const renewed = await expectAccepted(d, renewedOnC)
    expect(header(renewed.access)).toEqual(signedBy(K2))
    expect(await publishedKeys(d)).toEqual([published(K2)])
  })
})

describe('moving from SVC_JWT_SECRET to a key set without ending a session', () => {
  let fromS1: Issued
  let fromS2: Issued
  let fromS3: Issued

  it('S1 (secret only): signs HS256 without kid and publishes no key', async () => {
    const s1 = await configs.secretOnly()
    fromS1 = await Issued.on(s1, 4)
    for (const token of fromS1.tokens) expect(header(token)).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(await publishedKeys(s1)).toEqual([])
    await expectAccepted(s1, fromS1.take())
  })

  it('S2 (secret + [K1 verify-only]): still signs with the secret, publishes K1 and accepts the kid-less tokens', async () => {
    const s2 = await configs.secretAndK1VerifyOnly()
    const renewed = await expectAccepted(s2, fromS1.take())
    expect([header(renewed.access), header(renewed.refresh)]).toEqual([
      { alg: 'HS256', typ: 'JWT' },
      { alg: 'HS256', typ: 'JWT' },
    ])
    fromS2 = await Issued.on(s2, 3)
    for (const token of fromS2.tokens) expect(header(token)).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(await publishedKeys(s2)).toEqual([published(K1)])
  })

  it('S2 roll: secret-only and S2 instances accept what the other signed', async () => {
    const [s1, s2] = [await configs.secretOnly(), await configs.secretAndK1VerifyOnly()]
    await expectAccepted(s1, fromS2.take())
    await expectAccepted(s2, await signIn(s1))
  })

  it('S3 (secret + [K1]): accepts every earlier token, signs with K1 and renews a kid-less session with K1', async () => {
    const s3 = await configs.secretAndK1()
    const renewed = await expectAccepted(s3, fromS1.take())
    expect([header(renewed.access), header(renewed.refresh)]).toEqual([signedBy(K1), signedBy(K1)])
    await expectAccepted(s3, fromS2.take())
    fromS3 = await Issued.on(s3, 3)
    for (const token of fromS3.tokens) expect(header(token)).toEqual(signedBy(K1))
  })

  it('S3 roll: an S2 instance still up accepts what an S3 instance signed, since it already knew K1', async () => {
    await expectAccepted(await configs.secretAndK1VerifyOnly(), fromS3.take())
    await expectAccepted(await configs.secretAndK1(), await signIn(await configs.secretAndK1VerifyOnly()))
  })

  it('why K1 is introduced verify-only first: a secret-only instance refuses K1 tokens (AUTH_003, AUTH_006)', async () => {
    await expectRefused(await configs.secretOnly(), fromS3.take())
  })

  it('S4 ([K1] only, secret removed after the refresh lifetime): refuses kid-less tokens and accepts K1 tokens', async () => {
    const s4 = await configs.K1()
    await expectRefused(s4, fromS1.take())
    await expectRefused(s4, fromS2.take())
    // An S3 instance still up during this roll signs with K1 too.
    await expectAccepted(s4, await signIn(await configs.secretAndK1()))
    await expectAccepted(await configs.secretAndK1(), await signIn(s4))
  })
})
