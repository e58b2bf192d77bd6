import { afterEach, describe, expect, it, vi } from 'vitest'
import { decodeProtectedHeader } from 'jose'
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

const claims = (lifetimeSeconds = 600) => {
  const iat = Math.floor(Date.now() / 1000)
  return { sub: '1', type: 'access', iat, exp: iat + lifetimeSeconds }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('createTokenKeys', () => {
  it('signs with the first key of the set, naming its kid, and verifies tokens of every key', async () => {
    const keys = await keySet('EdDSA', 'ES256', 'RS256', 'HS256')
    const signed = await createTokenKeys({ keys, secret: null, issuer: ISSUER }).sign(claims())
    expect(decodeProtectedHeader(signed)).toEqual({ alg: 'EdDSA', kid: keys[0]!.kid, typ: 'JWT' })
    for (const key of keys) {
      const byThisKey = createTokenKeys({ keys: [key], secret: null, issuer: ISSUER })
      const verifier = createTokenKeys({ keys: [...keys].reverse(), secret: null, issuer: ISSUER })
      await expect(verifier.verify(await byThisKey.sign(claims()))).resolves.toMatchObject({ sub: '1', iss: ISSUER })
    }
  })

  it('signs HS256 without kid with the secret alone, and verifies such tokens beside a key set while the secret is set', async () => {
    const legacy = createTokenKeys({ keys: [], secret: SECRET, issuer: ISSUER })
    const token = await legacy.sign(claims())
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' })
    const keys = await keySet('EdDSA')
    await expect(createTokenKeys({ keys, secret: SECRET, issuer: ISSUER }).verify(token)).resolves.toMatchObject({ sub: '1' })
    await expect(createTokenKeys({ keys, secret: null, issuer: ISSUER }).verify(token)).rejects.toThrow()
  })

  it('refuses a cached token once it has expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const tokens = createTokenKeys({ keys: await keySet('EdDSA'), secret: null, issuer: ISSUER })
    const token = await tokens.sign(claims(60))
    await expect(tokens.verify(token)).resolves.toMatchObject({ sub: '1' })
    vi.setSystemTime(Date.now() + 61_000)
    await expect(tokens.verify(token)).rejects.toThrow()
  })

  it('answers a verified token again from the cache, frozen, and still refuses a token one byte away from it', async () => {
    const tokens = createTokenKeys({ keys: await keySet('EdDSA'), secret: null, issuer: ISSUER })
    const token = await tokens.sign(claims())
    const first = await tokens.verify(token)
    expect(await tokens.verify(token)).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    const [header, payload, signature] = token.split('.') as [string, string, string]
    const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`
    await expect(tokens.verify(`${header}.${payload}.${flipped}`)).rejects.toThrow()
    await expect(tokens.verify(`${token}x`)).rejects.toThrow()
  })

  it('publishes the public JWKs of the asymmetric keys only', async () => {
    const keys = await keySet('HS256', 'ES256')
    const { jwks } = createTokenKeys({ keys, secret: null, issuer: ISSUER })
    expect(jwks.keys.map((key) => key.kid)).toEqual([keys[1]!.kid])
  })

  it('signs with the secret, no kid, while every key of the set is verify-only, and verifies tokens of those keys', async () => {
    const [verifyOnly] = await keySet('EdDSA')
    const introduced = { ...verifyOnly!, signs: false }
    const tokens = createTokenKeys({ keys: [introduced], secret: SECRET, issuer: ISSUER })
    expect(decodeProtectedHeader(await tokens.sign(claims()))).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(tokens.jwks.keys.map((key) => key.kid)).toEqual([introduced.kid])
    const signedByIt = await createTokenKeys({ keys: [verifyOnly!], secret: null, issuer: ISSUER }).sign(claims())
    await expect(tokens.verify(signedByIt)).resolves.toMatchObject({ sub: '1' })
  })

  it('skips verify-only keys when it picks the signer', async () => {
    const [first, second] = await keySet('EdDSA', 'ES256')
    const tokens = createTokenKeys({ keys: [{ ...first!, signs: false }, second!], secret: null, issuer: ISSUER })
    expect(decodeProtectedHeader(await tokens.sign(claims()))).toMatchObject({ alg: 'ES256', kid: second!.kid })
  })

  it('needs a key that may sign or a secret', async () => {
    expect(() => createTokenKeys({ keys: [], secret: null, issuer: ISSUER })).toThrow(/no key that may sign, and no secret/)
    const [verifyOnly] = await keySet('EdDSA')
    expect(() => createTokenKeys({ keys: [{ ...verifyOnly!, signs: false }], secret: null, issuer: ISSUER })).toThrow(/no key that may sign/)
  })
})
