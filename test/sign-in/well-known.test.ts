import { createPublicKey } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { generateSigningKey, type PrivateSigningJwk } from '../../lib/sign-in/generate-signing-key.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { buildTestApp } from '../support/helper.js'

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth']

describe('GET /.well-known/jwks.json', () => {
  let keys: PrivateSigningJwk[]
  let app: FastifyInstance
  let secretOnly: FastifyInstance

  beforeAll(async () => {
    keys = await Promise.all((['EdDSA', 'HS256', 'ES256', 'RS256'] as const).map((alg) => generateSigningKey(alg)))
    ;[app, secretOnly] = await Promise.all([buildTestApp({ SVC_JWT_KEYS: JSON.stringify({ keys }) }), buildTestApp()])
  })
  afterAll(async () => {
    await Promise.all([app?.close(), secretOnly?.close()])
  })

  it('publishes the public half of every asymmetric key in the set order, and nothing of the HS256 key', async () => {
    const response = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })

    expect(response.statusCode).toBe(200)
    const published = response.json() as { keys: Array<Record<string, string>> }
    const asymmetric = keys.filter((key) => key.alg !== 'HS256')
    expect(published.keys.map((key) => [key.kid, key.alg, key.use])).toEqual(asymmetric.map((key) => [key.kid, key.alg, 'sig']))
    for (const [index, key] of published.keys.entries()) {
      const expected = createPublicKey({ key: asymmetric[index] as never, format: 'jwk' }).export({ format: 'jwk' })
      expect(key).toEqual({ ...expected, kid: asymmetric[index]!.kid, alg: asymmetric[index]!.alg, use: 'sig' })
      for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member)
    }
    const hmac = keys.find((key) => key.alg === 'HS256')!
    expect(response.body).not.toContain(hmac.kid)
    expect(response.body).not.toContain(hmac.k)
    for (const key of keys) if (key.d) expect(response.body).not.toContain(key.d)
  })

  it('is cacheable by verifiers for five minutes', async () => {
    const response = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    expect(response.headers['cache-control']).toBe('public, max-age=300')
    expect(response.headers['content-type']).toMatch(/^application\/json/)
  })

  it('answers anyone: a broken bearer token or cookie changes nothing', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/.well-known/jwks.json',
      headers: { authorization: 'Bearer not-a-jwt', cookie: 'svc_access_token=garbage' },
    })
    expect(response.statusCode).toBe(200)
    expect((response.json() as { keys: unknown[] }).keys).toHaveLength(3)
  })

  it('is an empty set when the service signs with SVC_JWT_SECRET alone (a secret is never published)', async () => {
    const response = await secretOnly.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ keys: [] })
  })

  it('answers any other method 405 METHOD_NOT_ALLOWED, naming GET', async () => {
    const response = await app.inject({ method: 'POST', url: '/.well-known/jwks.json', payload: {} })
    expectProblem(response, 405, 'METHOD_NOT_ALLOWED')
    expect(response.headers.allow).toMatch(/GET/)
  })

  it('is in the OpenAPI document', async () => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
    expect(document.paths).toHaveProperty(['/.well-known/jwks.json', 'get'])
  })
})
