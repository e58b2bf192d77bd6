import { describe, expect, it } from 'vitest'
import { generateSigningKey } from '../../lib/sign-in/generate-signing-key.js'
import { readSigningKeys, type SigningKey } from '../../lib/sign-in/signing-keys.js'
import { createTokenKeys } from '../../lib/sign-in/token-keys.js'

const ISSUER = 'svc-auth-svc'
const SECRET = 'a-test-secret-that-is-at-least-32-bytes!'

async function keySet(...algs: Array<'EdDSA' | 'ES256' | 'RS256' | 'HS256'>): Promise<SigningKey[]> {
  const read = readSigningKeys(JSON.stringify({ keys: await Promise.all(algs.map((alg) => generateSigningKey(alg))) }))
  if ('problem' in read) throw new Error(read.problem)
  return read.keys
}

// keyFor is what @fastify/jwt's secret callback answers (plugins/sign-in/auth.ts): the one place a request's key is chosen.
describe('TokenKeys.keyFor', () => {
  it('answers the key the kid names, as PEM for an asymmetric key and as the secret itself without kid', async () => {
    const [eddsa, es256] = await keySet('EdDSA', 'ES256')
    const keys = createTokenKeys({ keys: [eddsa!, es256!], secret: SECRET, issuer: ISSUER })
    expect(keys.keyFor({ alg: 'ES256', kid: es256!.kid, typ: 'JWT' })).toMatch(/^-----BEGIN PUBLIC KEY-----/)
    expect(keys.keyFor({ alg: 'HS256', typ: 'JWT' })).toBe(SECRET)
  })

  it.each([
    ['an unknown kid', (kid: string) => ({ alg: 'EdDSA', kid: `${kid}-x` })],
    ['HS256 under the kid of a public key', (kid: string) => ({ alg: 'HS256', kid })],
    ['another asymmetric algorithm under the kid', (kid: string) => ({ alg: 'ES256', kid })],
    ['a numeric kid', () => ({ alg: 'EdDSA', kid: 1 })],
    ['a jwk member', (kid: string) => ({ alg: 'EdDSA', kid, jwk: {} })],
    ['a crit member', (kid: string) => ({ alg: 'EdDSA', kid, crit: ['b64'] })],
    ['no header object', () => null],
  ])('refuses %s', async (_case, header) => {
    const [eddsa] = await keySet('EdDSA')
    expect(() => createTokenKeys({ keys: [eddsa!], secret: SECRET, issuer: ISSUER }).keyFor(header(eddsa!.kid))).toThrow()
  })

  it('refuses a kid-less token without a secret, and a kid-less one of another algorithm with it', async () => {
    const [eddsa] = await keySet('EdDSA')
    expect(() => createTokenKeys({ keys: [eddsa!], secret: null, issuer: ISSUER }).keyFor({ alg: 'HS256' })).toThrow()
    expect(() => createTokenKeys({ keys: [eddsa!], secret: SECRET, issuer: ISSUER }).keyFor({ alg: 'HS512' })).toThrow()
  })
})
