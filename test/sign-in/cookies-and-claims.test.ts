import { createHmac } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeJwt, refresh, registerOwner, registerStudent, type AuthResult, type Response } from '../support/auth-fixtures.js'
import { createTenant } from '../support/fixtures.js'
import { TEST_JWT_SECRET, buildTestApp } from '../support/helper.js'
import { portalUser } from './portal-users.js'

type Attributes = Record<string, string | true>

/** Every Set-Cookie header of the response as name -> { value, attributes } (attribute names lowercased). */
function setCookies(response: Response): Record<string, { value: string; attributes: Attributes }> {
  const raw = response.headers['set-cookie']
  const headers = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]
  const cookies: Record<string, { value: string; attributes: Attributes }> = {}
  for (const header of headers) {
    const [pair, ...rest] = header.split(';').map((part) => part.trim())
    const [name, ...value] = pair!.split('=')
    const attributes: Attributes = {}
    for (const attribute of rest) {
      const [key, ...attributeValue] = attribute.split('=')
      attributes[key!.toLowerCase()] = attributeValue.length ? attributeValue.join('=') : true
    }
    cookies[name!] = { value: value.join('='), attributes }
  }
  return cookies
}

const CLAIMS = ['exp', 'iat', 'iss', 'jti', 'role', 'sid', 'sub', 'tenant_id', 'tenant_slug', 'type']

function verifiesWithSecret(token: string, secret: string): boolean {
  const [header, payload, signature] = token.split('.')
  return createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url') === signature
}

describe('auth cookies and token claims', () => {
  let app: FastifyInstance
  let configured: FastifyInstance

  beforeAll(async () => {
    ;[app, configured] = await Promise.all([
      buildTestApp(),
      buildTestApp({
        SVC_COOKIE_SECURE: 'false',
        SVC_COOKIE_SAMESITE: 'strict',
        SVC_COOKIE_DOMAIN: 'school.example',
        SVC_ACCESS_TTL: '120',
        SVC_REFRESH_TTL: '900',
        SVC_JWT_ISSUER: 'custom-issuer',
      }),
    ])
  })
  afterAll(async () => {
    await Promise.all([app?.close(), configured?.close()])
  })

  async function signIn(target: FastifyInstance): Promise<AuthResult & { tenant: { id: number; slug: string }; userId: number }> {
    const instructor = await portalUser(target, { role: 'INSTRUCTOR' })
    return { ...(await instructor.signIn()), tenant: instructor.tenant, userId: instructor.user.id }
  }

  /** Tokens from the other ways of getting them: student registration, owner registration and refresh. */
  async function issuedBesidesLogin() {
    const tenant = await createTenant()
    const student = await registerStudent(app, tenant.slug)
    const ownerRegistration = await registerOwner(app)
    const rotated = await refresh(app, student.refreshToken)
    return { student, ownerRegistration, rotated }
  }

  describe('cookies', () => {
    it('sets both cookies with the default attributes', async () => {
      const { response, accessToken, refreshToken } = await signIn(app)
      expect(setCookies(response)).toEqual({
        svc_access_token: {
          value: accessToken,
          attributes: { 'max-age': '3600', path: '/', httponly: true, secure: true, samesite: 'Lax' },
        },
        svc_refresh_token: {
          value: refreshToken,
          attributes: { 'max-age': '604800', path: '/', httponly: true, secure: true, samesite: 'Lax' },
        },
      })
    })

    it('follows the configured Secure, SameSite, Domain and lifetimes', async () => {
      const { response, accessToken, refreshToken } = await signIn(configured)
      expect(setCookies(response)).toEqual({
        svc_access_token: {
          value: accessToken,
          attributes: { 'max-age': '120', domain: 'school.example', path: '/', httponly: true, samesite: 'Strict' },
        },
        svc_refresh_token: {
          value: refreshToken,
          attributes: { 'max-age': '900', domain: 'school.example', path: '/', httponly: true, samesite: 'Strict' },
        },
      })
      expect(response.json()).toMatchObject({ accessExpiresIn: 120, refreshExpiresIn: 900 })
    })

    it('sets the same attributes on registration, owner registration and refresh', async () => {
      const { student, ownerRegistration, rotated } = await issuedBesidesLogin()
      for (const result of [student, ownerRegistration, rotated]) {
        const cookies = setCookies(result.response)
        expect(Object.keys(cookies).sort()).toEqual(['svc_access_token', 'svc_refresh_token'])
        expect(cookies.svc_access_token!.attributes).toEqual({ 'max-age': '3600', path: '/', httponly: true, secure: true, samesite: 'Lax' })
        expect(cookies.svc_refresh_token!.attributes).toEqual({ 'max-age': '604800', path: '/', httponly: true, secure: true, samesite: 'Lax' })
      }
    })

    it('clears both cookies on logout with Max-Age=0 and the same attributes', async () => {
      const { bearer } = await signIn(configured)
      const response = await configured.inject({ method: 'POST', url: '/v1/logout', headers: bearer })
      expect(response.statusCode).toBe(204)
      const attributes = { 'max-age': '0', domain: 'school.example', path: '/', httponly: true, samesite: 'Strict' }
      expect(setCookies(response)).toEqual({
        svc_access_token: { value: '', attributes },
        svc_refresh_token: { value: '', attributes },
      })
    })

    it('never puts a token in a response body', async () => {
      const tenant = await createTenant()
      const results: AuthResult[] = [await signIn(app), await registerStudent(app, tenant.slug), await registerOwner(app)]
      results.push(await refresh(app, results[0]!.refreshToken))
      for (const { response, accessToken, refreshToken } of results) {
        expect(accessToken.length).toBeGreaterThan(20)
        for (const token of [accessToken, refreshToken]) {
          expect(response.body).not.toContain(token)
          expect(response.body).not.toContain(token.split('.')[2])
        }
        expect(Object.keys(response.json()).sort()).toEqual(['accessExpiresIn', 'refreshExpiresIn', 'user'])
      }
    })
  })

  describe('claims', () => {
    it('gives the access token exactly the documented claims, signed HS256 with the configured secret', async () => {
      const { accessToken, tenant, userId } = await signIn(app)
      const [header] = accessToken.split('.')
      expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' })
      expect(verifiesWithSecret(accessToken, TEST_JWT_SECRET)).toBe(true)
      const claims = decodeJwt(accessToken)
      expect(Object.keys(claims).sort()).toEqual(CLAIMS)
      expect(claims).toMatchObject({
        sub: String(userId),
        tenant_slug: tenant.slug,
        tenant_id: tenant.id,
        role: 'INSTRUCTOR',
        type: 'access',
        iss: 'svc-auth-svc',
      })
      expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/)
      expect(claims.sid).toMatch(/^[0-9a-f-]{36}$/)
      expect(Number.isInteger(claims.iat)).toBe(true)
      expect(Math.abs((claims.iat as number) - Date.now() / 1000)).toBeLessThan(60)
      expect((claims.exp as number) - (claims.iat as number)).toBe(3600)
    })

    it('gives the refresh token the same claim set with type refresh, the same sid and its own jti', async () => {
      const { accessToken, refreshToken } = await signIn(app)
      expect(verifiesWithSecret(refreshToken, TEST_JWT_SECRET)).toBe(true)
      const access = decodeJwt(accessToken)
      const claims = decodeJwt(refreshToken)
      expect(Object.keys(claims).sort()).toEqual(CLAIMS)
      expect(claims.type).toBe('refresh')
      expect(claims.sid).toBe(access.sid)
      expect(claims.jti).not.toBe(access.jti)
      expect((claims.exp as number) - (claims.iat as number)).toBe(604800)
    })

    it('uses the configured issuer and lifetimes', async () => {
      const { accessToken, refreshToken } = await signIn(configured)
      const access = decodeJwt(accessToken)
      const claims = decodeJwt(refreshToken)
      expect([access.iss, claims.iss]).toEqual(['custom-issuer', 'custom-issuer'])
      expect((access.exp as number) - (access.iat as number)).toBe(120)
      expect((claims.exp as number) - (claims.iat as number)).toBe(900)
    })

    it('issues the same claim set on registration and refresh', async () => {
      const { student, ownerRegistration, rotated } = await issuedBesidesLogin()
      for (const result of [student, ownerRegistration, rotated]) {
        expect(Object.keys(decodeJwt(result.accessToken)).sort()).toEqual(CLAIMS)
        expect(Object.keys(decodeJwt(result.refreshToken)).sort()).toEqual(CLAIMS)
      }
      expect(decodeJwt(ownerRegistration.accessToken)).toMatchObject({
        role: 'OWNER',
        tenant_id: ownerRegistration.user.tenantId,
        tenant_slug: ownerRegistration.user.tenantSlug,
        sub: String(ownerRegistration.user.id),
      })
    })

    it('refuses a token of another issuer', async () => {
      const { bearer } = await signIn(configured)
      // Same secret, different issuer setting: the default app does not accept the configured app's tokens.
      const response = await app.inject({ method: 'GET', url: '/v1/me/sessions', headers: bearer })
      expect(response.statusCode).toBe(401)
      expect(response.json().code).toBe('AUTH_003')
    })
  })
})
