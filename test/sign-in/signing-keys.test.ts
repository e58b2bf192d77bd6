import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSigningKey, type PrivateSigningJwk } from '../../lib/sign-in/generate-signing-key.js'
import { readSigningKeys, SIGNING_ALGORITHMS, type SigningKey } from '../../lib/sign-in/signing-keys.js'
import { tokenKeysFromEnv } from '../../lib/sign-in/token-keys-from-env.js'
import { ConfigError, loadEnv } from '../../lib/env.js'
import { configProblems } from '../support/config-problems.js'
import { buildTestApp } from '../support/helper.js'

type Jwk = Record<string, unknown>

// The JWK members that carry private material: none may reach a message, a log or the published set.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] as const
const MATERIAL_WINDOW = 20

const setting = (keys: unknown[]) => JSON.stringify({ keys })

/** Every private member of these JWKs: what no problem may quote, whole or in part. */
function materialOf(...jwks: Jwk[]): string[] {
  return jwks.flatMap((jwk) => PRIVATE_MEMBERS.flatMap((name) => (typeof jwk[name] === 'string' ? [jwk[name] as string] : [])))
}

/** Fails when `text` holds any 20-character run of any secret; the failure names no secret itself. */
function expectNoMaterial(text: string, secrets: readonly string[]): void {
  expect(secrets.length).toBeGreaterThan(0)
  for (const [index, secret] of secrets.entries()) {
    expect(secret.length).toBeGreaterThanOrEqual(MATERIAL_WINDOW)
    for (let start = 0; start + MATERIAL_WINDOW <= secret.length; start += 1) {
      if (text.includes(secret.slice(start, start + MATERIAL_WINDOW))) {
        expect.fail(`the text holds ${MATERIAL_WINDOW} characters of secret ${index + 1} from offset ${start}`)
      }
    }
  }
}

function configErrorOf(source: Record<string, string>): ConfigError {
  try {
    loadEnv(source)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  return expect.fail('loadEnv accepted the configuration')
}

/** An asymmetric private JWK made by node:crypto, for shapes generateSigningKey never makes (RSA 1024, P-384). */
function nodeJwk(type: 'rsa' | 'ec', options: { modulusLength?: number; publicExponent?: number; namedCurve?: string }): Jwk {
  const { privateKey } = type === 'rsa'
    ? generateKeyPairSync('rsa', { modulusLength: options.modulusLength ?? 2048, publicExponent: options.publicExponent ?? 65537 })
    : generateKeyPairSync('ec', { namedCurve: options.namedCurve ?? 'P-256' })
  return privateKey.export({ format: 'jwk' }) as Jwk
}

const hmacJwk = (kid: string, bytes: number, alg = 'HS256'): Jwk => ({ kid, alg, use: 'sig', kty: 'oct', k: randomBytes(bytes).toString('base64url') })

interface RefusedSet {
  /** SVC_JWT_KEYS as an operator would write it. */
  value: string
  /** How the problem begins: the setting, and the key's position and kid (when it has one). */
  names: string
  /** The reason, somewhere after that. */
  reason: string
  /** The private material the value holds; none of it may appear in the problem. */
  material: string[]
}

describe('SVC_JWT_KEYS', () => {
  let dir: string
  let good: PrivateSigningJwk[]

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'signing-keys-'))
    good = await Promise.all(SIGNING_ALGORITHMS.map((alg) => generateSigningKey(alg)))
  })
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true })
  })

  const eddsa = () => good[0] as PrivateSigningJwk
  // How a problem about one key begins, and one about the whole setting.
  const keyAt = (position: number, kid?: unknown) => `SVC_JWT_KEYS: key ${position}${kid === undefined ? '' : ` (kid ${JSON.stringify(kid)})`}: `
  const wholeSet = 'SVC_JWT_KEYS: '

  // Built inside each test, once the good keys exist. Some bad keys sit behind a good first key, so the problem must
  // name the right position.
  const refused: Record<string, () => RefusedSet> = {
    'an HS256 key of 31 bytes': () => {
      const weak = hmacJwk('short-hmac', 31)
      const reason = 'an HS256 key needs at least 32 bytes (got 31)'
      return { value: setting([eddsa(), weak]), names: keyAt(2, 'short-hmac'), reason, material: materialOf(eddsa(), weak) }
    },
    'an RSA key of 1024 bits': () => {
      const weak = { ...nodeJwk('rsa', { modulusLength: 1024 }), kid: 'rsa-1024', alg: 'RS256', use: 'sig' }
      const reason = 'an RS256 key needs at least 2048 bits (got 1024)'
      return { value: setting([weak]), names: keyAt(1, 'rsa-1024'), reason, material: materialOf(weak) }
    },
    'an RSA key with public exponent 3': () => {
      const weak = { ...nodeJwk('rsa', { modulusLength: 2048, publicExponent: 3 }), kid: 'rsa-e3', alg: 'RS256', use: 'sig' }
      const reason = 'an RS256 key needs a public exponent of at least 65537 (got 3)'
      return { value: setting([weak]), names: keyAt(1, 'rsa-e3'), reason, material: materialOf(weak) }
    },
    'an EC key on P-384 named ES256': () => {
      const wrong = { ...nodeJwk('ec', { namedCurve: 'P-384' }), kid: 'p384', alg: 'ES256' }
      return { value: setting([wrong]), names: keyAt(1, 'p384'), reason: 'ES256 needs kty EC and crv P-256', material: materialOf(wrong) }
    },
    'an OKP key named RS256': () => {
      const wrong = { ...eddsa(), kid: 'okp-as-rsa', alg: 'RS256' }
      return { value: setting([wrong]), names: keyAt(1, 'okp-as-rsa'), reason: 'RS256 needs kty RSA', material: materialOf(wrong) }
    },
    'an unknown alg (HS512)': () => {
      const wrong = hmacJwk('hs512', 64, 'HS512')
      const reason = 'alg must be one of EdDSA, ES256, RS256, HS256'
      return { value: setting([eddsa(), wrong]), names: keyAt(2, 'hs512'), reason, material: materialOf(eddsa(), wrong) }
    },
    'alg none': () => {
      const wrong = { ...eddsa(), kid: 'no-alg', alg: 'none' }
      const reason = 'alg must be one of EdDSA, ES256, RS256, HS256'
      return { value: setting([wrong]), names: keyAt(1, 'no-alg'), reason, material: materialOf(wrong) }
    },
    'a key without kid': () => {
      const { kid: _kid, ...nameless } = good[1] as PrivateSigningJwk
      const reason = 'needs a kid of 1 to 128 characters'
      return { value: setting([eddsa(), nameless]), names: keyAt(2), reason, material: materialOf(eddsa(), nameless) }
    },
    'two keys with one kid': () => {
      const first = { ...eddsa(), kid: 'twice' }
      const second = { ...(good[1] as PrivateSigningJwk), kid: 'twice' }
      return { value: setting([first, second]), names: keyAt(2, 'twice'), reason: 'kid used twice', material: materialOf(first, second) }
    },
    'a public key without its private part (d)': () => {
      const { d: _d, ...publicOnly } = good[1] as PrivateSigningJwk
      const reason = 'needs its private part (d)'
      return { value: setting([eddsa(), publicOnly]), names: keyAt(2, publicOnly.kid), reason, material: materialOf(eddsa()) }
    },
    'a key for encryption (use enc)': () => {
      const wrong = { ...eddsa(), use: 'enc' }
      return { value: setting([wrong]), names: keyAt(1, wrong.kid), reason: 'use must be "sig" when given', material: materialOf(wrong) }
    },
    'key_ops naming an operation other than sign and verify': () => {
      const wrong = { ...eddsa(), key_ops: ['sign', 'encrypt'] }
      return { value: setting([wrong]), names: keyAt(1, wrong.kid), reason: 'key_ops', material: materialOf(wrong) }
    },
    'an EdDSA key whose d is not a valid Ed25519 private key': () => {
      const wrong = { ...eddsa(), d: randomBytes(31).toString('base64url') }
      return { value: setting([wrong]), names: keyAt(1, wrong.kid), reason: 'not a valid EdDSA private key', material: materialOf(wrong) }
    },
    'an empty keys array': () => ({ value: setting([]), names: wholeSet, reason: 'a JWK Set needs a non-empty "keys" array', material: [] }),
    'text that is not JSON (a set cut short)': () => {
      const cut = hmacJwk('cut', 32)
      return { value: setting([cut]).slice(0, -3), names: wholeSet, reason: 'not JSON', material: materialOf(cut) }
    },
    'file: naming a missing file': () => {
      const path = join(dir, 'missing.json')
      return { value: `file:${path}`, names: wholeSet, reason: `cannot read ${JSON.stringify(path)} (ENOENT)`, material: [] }
    },
  }

  describe('refused at start, naming the key and the reason and none of its material', () => {
    it.each(Object.keys(refused))('%s', (name) => {
      const { value, names, reason, material } = (refused[name] as () => RefusedSet)()
      const read = readSigningKeys(value)
      expect(read).toEqual({ problem: expect.any(String) })
      const problem = (read as { problem: string }).problem
      expect(problem.slice(0, names.length)).toBe(names)
      expect(problem.slice(names.length)).toContain(reason)

      // The start reports that same problem, alone.
      const error = configErrorOf({ SVC_JWT_KEYS: value })
      expect(error.problems).toEqual([problem])
      expect(error.message).toContain(problem)
      if (material.length > 0) {
        expectNoMaterial(error.message, material)
        expectNoMaterial(error.stack ?? '', material)
      }
    })

    it('keeps a weak key out of the problem even when it is read from a file', () => {
      const weak = hmacJwk('file-hmac', 31)
      const path = join(dir, 'weak.json')
      writeFileSync(path, setting([weak]))
      const error = configErrorOf({ SVC_JWT_KEYS: `file:${path}` })
      expect(error.problems).toEqual(['SVC_JWT_KEYS: key 1 (kid "file-hmac"): an HS256 key needs at least 32 bytes (got 31)'])
      expectNoMaterial(error.message, materialOf(weak))
    })

    it('is refused by buildTestApp: a service with a weak key does not start', async () => {
      const weak = hmacJwk('app-hmac', 31)
      const start = buildTestApp({ SVC_JWT_KEYS: setting([weak]) })
      await expect(start).rejects.toBeInstanceOf(ConfigError)
      await expect(start).rejects.toThrow('SVC_JWT_KEYS: key 1 (kid "app-hmac"): an HS256 key needs at least 32 bytes (got 31)')
    })

    it('is refused by the service\'s token keys even when handed a setting loadEnv never checked', () => {
      const weak = { ...nodeJwk('rsa', { modulusLength: 1024 }), kid: 'unchecked', alg: 'RS256' }
      const env = { ...loadEnv({}), SVC_JWT_KEYS: setting([weak]) }
      let thrown: unknown
      try {
        tokenKeysFromEnv(env)
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(Error)
      const message = (thrown as Error).message
      expect(message).toContain('SVC_JWT_KEYS: key 1 (kid "unchecked"): an RS256 key needs at least 2048 bits (got 1024)')
      expectNoMaterial(message, materialOf(weak))
    })
  })

  describe('accepted', () => {
    it('reads an inline JWK Set with one key of each algorithm, in order', () => {
      const read = readSigningKeys(setting(good))
      expect('keys' in read).toBe(true)
      const keys = (read as { keys: SigningKey[] }).keys
      expect(keys.map((key) => [key.kid, key.alg])).toEqual(good.map((jwk) => [jwk.kid, jwk.alg]))
      expect(loadEnv({ SVC_JWT_KEYS: setting(good) }).SVC_JWT_KEYS).toBe(setting(good))
    })

    it('reads the same set from file: and a path', () => {
      const path = join(dir, 'keys.json')
      writeFileSync(path, setting(good))
      const fromFile = readSigningKeys(`file:${path}`) as { keys: SigningKey[] }
      const inline = readSigningKeys(setting(good)) as { keys: SigningKey[] }
      expect(fromFile.keys.map((key) => key.publicJwk)).toEqual(inline.keys.map((key) => key.publicJwk))
      expect(fromFile.keys.map((key) => [key.kid, key.alg])).toEqual(good.map((jwk) => [jwk.kid, jwk.alg]))
      expect(configProblems({ SVC_JWT_KEYS: `file:${path}` })).toEqual([])
    })

    it('publishes only the public members of each asymmetric key, and nothing of an HS256 key', () => {
      const keys = (readSigningKeys(setting(good)) as { keys: SigningKey[] }).keys
      const publicMembers: Record<string, string[]> = {
        EdDSA: ['alg', 'crv', 'kid', 'kty', 'use', 'x'],
        ES256: ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'],
        RS256: ['alg', 'e', 'kid', 'kty', 'n', 'use'],
      }
      for (const key of keys) {
        if (key.alg === 'HS256') {
          expect(key.publicJwk).toBeNull()
          continue
        }
        const published = key.publicJwk as Record<string, string>
        expect(Object.keys(published).sort()).toEqual(publicMembers[key.alg])
        for (const member of PRIVATE_MEMBERS) expect(published).not.toHaveProperty(member)
        const source = good.find((jwk) => jwk.kid === key.kid) as PrivateSigningJwk
        expectNoMaterial(JSON.stringify(published), materialOf(source))
        expect(published).toMatchObject({ kid: source.kid, alg: source.alg, use: 'sig', kty: source.kty })
      }
    })
  })

  describe('verify-only keys (key_ops ["verify"])', () => {
    it('reads them as keys that verify and never sign; ["sign", "verify"] signs', () => {
      const [first, second] = good as [PrivateSigningJwk, PrivateSigningJwk]
      const read = readSigningKeys(JSON.stringify({ keys: [{ ...first, key_ops: ['verify'] }, { ...second, key_ops: ['sign', 'verify'] }] }))
      expect((read as { keys: SigningKey[] }).keys.map((key) => [key.kid, key.signs])).toEqual([
        [first.kid, false],
        [second.kid, true],
      ])
    })

    it('refuses a set where no key may sign while SVC_JWT_SECRET is unset, and accepts it beside the secret', () => {
      const verifyOnly = JSON.stringify({ keys: good.map((jwk) => ({ ...jwk, key_ops: ['verify'] })) })
      expect(configProblems({ SVC_JWT_KEYS: verifyOnly })).toEqual([
        'SVC_JWT_KEYS: every key is verify-only (key_ops ["verify"]) and SVC_JWT_SECRET is unset: nothing would sign',
      ])
      expect(configProblems({ SVC_JWT_KEYS: verifyOnly, SVC_JWT_SECRET: 'x'.repeat(32) })).toEqual([])
    })
  })

  describe('in production', () => {
    it('refuses to start with neither SVC_JWT_SECRET nor SVC_JWT_KEYS', () => {
      expect(configProblems({ NODE_ENV: 'production' })).toEqual(['SVC_JWT_SECRET or SVC_JWT_KEYS: one is required when NODE_ENV=production'])
    })

    it('starts with SVC_JWT_KEYS alone', () => {
      const env = loadEnv({ NODE_ENV: 'production', SVC_JWT_KEYS: setting(good) })
      expect(env.SVC_JWT_SECRET).toBeUndefined()
      expect(env.SVC_JWT_KEYS).toBe(setting(good))
      // Its token keys come from the set alone: no development secret stands in for the missing SVC_JWT_SECRET.
      expect(tokenKeysFromEnv(env).jwks.keys.map((jwk) => jwk.kid)).toEqual(good.filter((jwk) => jwk.alg !== 'HS256').map((jwk) => jwk.kid))
    })
  })
})
