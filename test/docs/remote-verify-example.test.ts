import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { decodeJwt, decodeProtectedHeader, generateKeyPair, importJWK, SignJWT, type JWTPayload } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { generateSigningKey, type PrivateSigningJwk } from '../../lib/sign-in/generate-signing-key.js'
import { insertUserWithPassword, login, uniqueAddress } from '../support/auth-fixtures.js'
import { repoRoot, runProcess } from '../support/child-processes.js'
import { createTenant } from '../support/fixtures.js'
import { TEST_JWT_SECRET, useTestApp } from '../support/helper.js'

const EXAMPLE = fileURLToPath(new URL('../../docs/examples/verify-access-token.mjs', import.meta.url))
const CLIENTS_DOC = fileURLToPath(new URL('../../docs/clients.md', import.meta.url))
const SECTION = '## Verifying tokens in another service\n'

// "Another service": a Node process of its own that imports the example as such a service would, verifies one token
// and prints what it got. A refusal is printed, not thrown, so the test can tell which check refused.
const VERIFY_ONE_TOKEN = `
const [exampleUrl, token] = process.argv.slice(1)
const { verifyAccessToken } = await import(exampleUrl)
try {
  console.log(JSON.stringify({ verified: await verifyAccessToken(token) }))
} catch (error) {
  if (typeof error.code !== 'string') throw error
  console.log(JSON.stringify({ refused: { code: error.code, claim: error.claim } }))
}
`

interface Outcome {
  verified?: Record<string, unknown>
  refused?: { code: string; claim?: string }
}

/** The code block of the docs section: what a reader copies. */
function documentedCode(): string {
  const doc = readFileSync(CLIENTS_DOC, 'utf8')
  const section = doc.indexOf(SECTION)
  expect(section, `docs/clients.md has no "${SECTION.trim()}"`).toBeGreaterThanOrEqual(0)
  const open = doc.indexOf('```js\n', section)
  const close = doc.indexOf('\n```\n', open)
  expect(open).toBeGreaterThan(section)
  expect(close).toBeGreaterThan(open)
  return doc.slice(open + '```js\n'.length, close + 1)
}

/** The same claims in the same header, with the payload swapped: the signature is the genuine token's. */
function withClaims(token: string, change: Record<string, unknown>): string {
  const [header, , signature] = token.split('.')
  const payload = Buffer.from(JSON.stringify({ ...decodeJwt(token), ...change })).toString('base64url')
  return `${header}.${payload}.${signature}`
}

describe('docs/examples/verify-access-token.mjs: another service verifying access tokens with the JWKS', () => {
  let serviceKey: PrivateSigningJwk
  let baseUrl: string
  let signedIn: { accessToken: string; refreshToken: string; userId: number; tenantId: number; tenantSlug: string }

  beforeAll(async () => {
    serviceKey = await generateSigningKey('EdDSA')
    // SVC_JWT_SECRET stays set (testEnv's default): the service would still accept HS256 tokens without kid, which
    // another service must refuse all the same.
  })
  const app = useTestApp(() => ({ env: { SVC_JWT_KEYS: JSON.stringify({ keys: [serviceKey] }) } }))
  beforeAll(async () => {
    baseUrl = await app.current.listen({ host: '127.0.0.1', port: 0 })
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant, { role: 'MANAGER' })
    const answer = await login(
      app.current,
      { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId },
      { remoteAddress: uniqueAddress() },
    )
    expect(answer.response.statusCode).toBe(200)
    signedIn = { accessToken: answer.accessToken, refreshToken: answer.refreshToken, userId: user.id, tenantId: tenant.id, tenantSlug: tenant.slug }
  })

  async function verifyInAnotherService(token: string): Promise<Outcome> {
    const run = await runProcess(process.execPath, ['--input-type=module', '-e', VERIFY_ONE_TOKEN, pathToFileURL(EXAMPLE).href, token], {
      cwd: repoRoot,
      // Only what the example reads: the issuer is left to its default, which is the service's default too.
      env: { PATH: process.env.PATH, AUTH_BASE_URL: baseUrl },
      timeout: 20_000,
    })
    expect(run, 'the child process failed').toMatchObject({ code: 0, stderr: '' })
    return JSON.parse(run.stdout) as Outcome
  }

  /** Claims signed with the service's own key and kid: only the claims can make the example refuse them. */
  async function signedWithServiceKey(claims: JWTPayload): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: serviceKey.kid, typ: 'JWT' })
      .sign(await importJWK(serviceKey, 'EdDSA'))
  }

  it('keeps the code block of docs/clients.md byte-identical to the example file', () => {
    expect(documentedCode()).toBe(readFileSync(EXAMPLE, 'utf8'))
  })

  it('verifies a genuine access token through the published keys and answers who the caller is', async () => {
    expect(decodeProtectedHeader(signedIn.accessToken)).toEqual({ alg: 'EdDSA', kid: serviceKey.kid, typ: 'JWT' })
    const claims = decodeJwt(signedIn.accessToken)
    expect(await verifyInAnotherService(signedIn.accessToken)).toEqual({
      verified: {
        userId: signedIn.userId,
        tenantId: signedIn.tenantId,
        tenantSlug: signedIn.tenantSlug,
        role: 'MANAGER',
        sessionId: claims.sid,
        expiresAt: new Date((claims.exp as number) * 1000).toISOString(),
      },
    })
    expect(claims.sid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  })

  it('refuses the refresh token of the same sign-in, though its signature, issuer and expiry are good', async () => {
    expect(decodeJwt(signedIn.refreshToken)).toMatchObject({ type: 'refresh', sid: decodeJwt(signedIn.accessToken).sid })
    expect(await verifyInAnotherService(signedIn.refreshToken)).toEqual({ refused: { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'type' } })
  })

  it('refuses the genuine access token with one claim changed', async () => {
    const promoted = withClaims(signedIn.accessToken, { role: 'OWNER' })
    expect(await verifyInAnotherService(promoted)).toEqual({ refused: { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' } })
  })

  it('refuses the same claims signed by a key the service never published, under the published kid', async () => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' })
    const forged = await new SignJWT(decodeJwt(signedIn.accessToken))
      .setProtectedHeader({ alg: 'EdDSA', kid: serviceKey.kid, typ: 'JWT' })
      .sign(privateKey)
    expect(await verifyInAnotherService(forged)).toEqual({ refused: { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' } })
  })

  it('refuses the same claims signed by a key the service does not hold, under a kid of its own', async () => {
    const { privateKey } = await generateKeyPair('ES256')
    const forged = await new SignJWT(decodeJwt(signedIn.accessToken))
      .setProtectedHeader({ alg: 'ES256', kid: 'not-a-published-kid', typ: 'JWT' })
      .sign(privateKey)
    expect(await verifyInAnotherService(forged)).toEqual({ refused: { code: 'ERR_JWKS_NO_MATCHING_KEY' } })
  })

  it("refuses an HS256 token signed with the service's own secret: another service holds no secret", async () => {
    const hmac = await new SignJWT(decodeJwt(signedIn.accessToken))
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(TEST_JWT_SECRET))
    expect(await verifyInAnotherService(hmac)).toEqual({ refused: { code: 'ERR_JOSE_ALG_NOT_ALLOWED' } })
  })

  it("refuses an expired access token and one of another issuer, even signed with the service's key", async () => {
    const claims = decodeJwt(signedIn.accessToken)
    const now = Math.floor(Date.now() / 1000)
    const expired = await signedWithServiceKey({ ...claims, iat: now - 7200, exp: now - 3600 })
    const foreign = await signedWithServiceKey({ ...claims, iss: 'another-issuer' })
    expect(await verifyInAnotherService(expired)).toEqual({ refused: { code: 'ERR_JWT_EXPIRED', claim: 'exp' } })
    expect(await verifyInAnotherService(foreign)).toEqual({ refused: { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'iss' } })
    // The control: the same key and claims, unchanged, pass.
    expect(await verifyInAnotherService(await signedWithServiceKey(claims))).toHaveProperty('verified.userId', signedIn.userId)
  })
})
