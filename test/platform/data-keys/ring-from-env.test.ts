import { hkdfSync, type KeyObject } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CODE_KEY_INFO, dataKeyRingFromEnv } from '../../../lib/data-keys/ring-from-env.js'
import { ConfigError, loadEnv } from '../../../lib/env.js'
import { configProblems } from '../../support/config-problems.js'
import { dataKeysSetting, hs256Keys, newDataKey } from './keys.js'
import { buildAppWith } from '../../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../../support/isolated-database.js'

const OTP_SECRET = 'an-otp-secret-of-at-least-thirty-two-chars'
const JWT_SECRET = 'a-jwt-secret-of-at-least-thirty-two-chars!'
const hex = (key: KeyObject) => key.export().toString('hex')
const jwtDerived = (secret: string) => Buffer.from(hkdfSync('sha256', Buffer.from(secret), Buffer.alloc(0), CODE_KEY_INFO, 32)).toString('hex')
const ringOf = (env: Parameters<typeof dataKeyRingFromEnv>[0]) => dataKeyRingFromEnv(env).ring
const kidsOf = (env: Parameters<typeof dataKeyRingFromEnv>[0]) => ringOf(env).keys.map((entry) => entry.kid)

describe('the data key ring (lib/data-keys/ring-from-env.ts)', () => {
  it('is SVC_OTP_SECRET alone, kid default, when SVC_DATA_KEYS is unset, whatever SVC_JWT_SECRET is', () => {
    const { ring, source } = dataKeyRingFromEnv({ NODE_ENV: 'production', SVC_OTP_SECRET: OTP_SECRET, SVC_JWT_SECRET: JWT_SECRET })
    expect(source).toBe('SVC_OTP_SECRET')
    expect(ring.keys.map((entry) => [entry.kid, hex(entry.key)])).toEqual([['default', Buffer.from(OTP_SECRET).toString('hex')]])
    expect(ring.legacyKid).toBe('default')
  })

  it('is the key derived from SVC_JWT_SECRET with HKDF-SHA256 alone, kid jwt, with neither other setting: never the secret itself', () => {
    const { ring, source } = dataKeyRingFromEnv({ NODE_ENV: 'production', SVC_JWT_SECRET: JWT_SECRET })
    expect(source).toBe('SVC_JWT_SECRET')
    expect(ring.keys.map((entry) => [entry.kid, hex(entry.key)])).toEqual([['jwt', jwtDerived(JWT_SECRET)]])
    expect(ring.legacyKid).toBe('jwt')
    expect(hex(ring.keys[0].key)).not.toContain(Buffer.from(JWT_SECRET).toString('hex'))
    expect(hex(ringOf({ NODE_ENV: 'production', SVC_JWT_SECRET: `${JWT_SECRET}x` }).keys[0].key)).not.toBe(jwtDerived(JWT_SECRET))
    // Built the same way by every instance: what one seals, another opens.
    expect(hex(ringOf({ NODE_ENV: 'production', SVC_JWT_SECRET: JWT_SECRET }).keys[0].key)).toBe(jwtDerived(JWT_SECRET))
  })

  it('puts the keys of SVC_DATA_KEYS first, in order, and keeps the secret key last while it is set, or where its entry places it', () => {
    const [k1, k2] = [newDataKey('k1'), newDataKey('k2')]
    const { ring, source } = dataKeyRingFromEnv({ NODE_ENV: 'production', SVC_DATA_KEYS: dataKeysSetting(k2, k1), SVC_JWT_SECRET: JWT_SECRET })
    expect(source).toBe('SVC_DATA_KEYS')
    expect(ring.keys.map((entry) => [entry.kid, hex(entry.key)])).toEqual([
      ['k2', Buffer.from(k2.key, 'base64').toString('hex')],
      ['k1', Buffer.from(k1.key, 'base64').toString('hex')],
      ['jwt', jwtDerived(JWT_SECRET)],
    ])
    expect(ring.legacyKid).toBe('jwt')
    expect(kidsOf({ NODE_ENV: 'production', SVC_DATA_KEYS: dataKeysSetting({ kid: 'jwt' }, k2), SVC_JWT_SECRET: JWT_SECRET })).toEqual(['jwt', 'k2'])
    expect(kidsOf({ NODE_ENV: 'production', SVC_DATA_KEYS: dataKeysSetting(k2), SVC_OTP_SECRET: OTP_SECRET, SVC_JWT_SECRET: JWT_SECRET })).toEqual(['k2', 'default'])
    const alone = ringOf({ NODE_ENV: 'production', SVC_DATA_KEYS: dataKeysSetting(k2) })
    expect([alone.keys.map((entry) => entry.kid), alone.legacyKid]).toEqual([['k2'], null])
  })

  it('refuses a production start with none of the three, naming SVC_DATA_KEYS', () => {
    const refused = (() => {
      try {
        dataKeyRingFromEnv({ NODE_ENV: 'production' })
        return null
      } catch (error) {
        return error
      }
    })()
    expect(refused).toBeInstanceOf(ConfigError)
    expect((refused as ConfigError).problems).toEqual([
      'SVC_DATA_KEYS: required when NODE_ENV=production and SVC_OTP_SECRET and SVC_JWT_SECRET are unset (the keys of data at rest)',
    ])
  })

  it('is a random key per process outside production, with a warning', () => {
    const onRandom = vi.fn()
    const first = dataKeyRingFromEnv({ NODE_ENV: 'development' }, onRandom)
    const second = dataKeyRingFromEnv({ NODE_ENV: 'test' }, onRandom)
    expect([first.source, second.source]).toEqual(['random', 'random'])
    expect(hex(first.ring.keys[0].key)).not.toBe(hex(second.ring.keys[0].key))
    expect(onRandom).toHaveBeenCalledTimes(2)
  })
})

describe('a production app and its data keys', () => {
  let iso: IsolatedDatabase
  // A database of its own: the run's shared one holds values sealed under the test secret's key, which these lack.
  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso?.drop()
  })

  it('stops the start signing with SVC_JWT_KEYS alone, and starts with SVC_OTP_SECRET or SVC_DATA_KEYS', async () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: iso.url || undefined, SVC_JWT_SECRET: undefined, SVC_JWT_KEYS: hs256Keys() }
    // buildAppWith gives the pool back when the start fails.
    const none = async () => undefined
    await expect(buildAppWith(none, production)).rejects.toThrow(/SVC_DATA_KEYS: required when NODE_ENV=production/)
    for (const keys of [{ SVC_OTP_SECRET: OTP_SECRET }, { SVC_DATA_KEYS: dataKeysSetting(newDataKey('k1')) }]) {
      const started = await buildAppWith(none, { ...production, ...keys })
      await started.close()
    }
  })
})

describe('SVC_OTP_SECRET and the code limits', () => {
  it('is a secret setting: at least 32 characters, and a refusal names its length, never its value', () => {
    const short = 'too-short-otp-secret'
    const problems = configProblems({ SVC_OTP_SECRET: short })
    expect(problems).toEqual([`SVC_OTP_SECRET: Expected string length greater or equal to 32 (got ${short.length} characters, not shown)`])
    expect(loadEnv({ SVC_OTP_SECRET: OTP_SECRET }).SVC_OTP_SECRET).toBe(OTP_SECRET)
  })

  it('comes with its limits and their defaults', () => {
    expect(loadEnv({})).toMatchObject({ SVC_OTP_TTL_SECONDS: 300, SVC_OTP_MAX_ATTEMPTS: 5, SVC_OTP_RESEND_SECONDS: 60, SVC_OTP_DAILY_LIMIT: 10 })
    for (const [name, value] of [['SVC_OTP_TTL_SECONDS', '10'], ['SVC_OTP_MAX_ATTEMPTS', '0'], ['SVC_OTP_DAILY_LIMIT', '0'], ['SVC_OTP_RESEND_SECONDS', '-1']]) {
      expect(configProblems({ [name!]: value! })).toEqual([expect.stringMatching(new RegExp(`^${name}:`))])
    }
  })
})
