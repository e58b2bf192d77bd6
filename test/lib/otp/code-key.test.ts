import { hkdfSync } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { ConfigError, loadEnv } from '../../../lib/env.js'
import { CODE_KEY_INFO, codeKeyFromEnv } from '../../../lib/otp/code-key.js'
import { configProblems } from '../../config-problems.js'
import { buildAppWith } from '../../helper.js'

const OTP_SECRET = 'an-otp-secret-of-at-least-thirty-two-chars'
const JWT_SECRET = 'a-jwt-secret-of-at-least-thirty-two-chars!'
const keyBytes = (key: ReturnType<typeof codeKeyFromEnv>['key']) => key.export().toString('hex')

describe('the one-time code key (SVC_OTP_SECRET)', () => {
  it('is SVC_OTP_SECRET when set, whatever SVC_JWT_SECRET is', () => {
    const { key, source } = codeKeyFromEnv({ NODE_ENV: 'production', SVC_OTP_SECRET: OTP_SECRET, SVC_JWT_SECRET: JWT_SECRET })
    expect(source).toBe('SVC_OTP_SECRET')
    expect(keyBytes(key)).toBe(Buffer.from(OTP_SECRET).toString('hex'))
  })

  it('is derived from SVC_JWT_SECRET with HKDF-SHA256 otherwise: never the secret itself, and another per secret', () => {
    const { key, source } = codeKeyFromEnv({ NODE_ENV: 'production', SVC_JWT_SECRET: JWT_SECRET })
    expect(source).toBe('SVC_JWT_SECRET')
    const expected = Buffer.from(hkdfSync('sha256', Buffer.from(JWT_SECRET), Buffer.alloc(0), CODE_KEY_INFO, 32)).toString('hex')
    expect(keyBytes(key)).toBe(expected)
    expect(keyBytes(key)).not.toContain(Buffer.from(JWT_SECRET).toString('hex'))
    const other = codeKeyFromEnv({ NODE_ENV: 'production', SVC_JWT_SECRET: `${JWT_SECRET}x` })
    expect(keyBytes(other.key)).not.toBe(expected)
    // Built the same way by every instance: codes issued by one verify on another.
    expect(keyBytes(codeKeyFromEnv({ NODE_ENV: 'production', SVC_JWT_SECRET: JWT_SECRET }).key)).toBe(expected)
  })

  it('refuses a production start with neither secret, naming SVC_OTP_SECRET', () => {
    const refused = (() => {
      try {
        codeKeyFromEnv({ NODE_ENV: 'production' })
        return null
      } catch (error) {
        return error
      }
    })()
    expect(refused).toBeInstanceOf(ConfigError)
    expect((refused as ConfigError).problems).toEqual([
      'SVC_OTP_SECRET: required when NODE_ENV=production and SVC_JWT_SECRET is unset (the key of one-time codes)',
    ])
  })

  it('stops the start of a production app signing with SVC_JWT_KEYS alone, and lets it start with SVC_OTP_SECRET', async () => {
    const keys = JSON.stringify({ keys: [{ kty: 'oct', kid: 'k1', alg: 'HS256', k: Buffer.alloc(32, 7).toString('base64url') }] })
    const production = { NODE_ENV: 'production', SVC_JWT_SECRET: undefined, SVC_JWT_KEYS: keys }
    // buildAppWith gives the pool back when the start fails.
    const none = async () => undefined
    await expect(buildAppWith(none, production)).rejects.toThrow(/SVC_OTP_SECRET: required when NODE_ENV=production/)
    const started = await buildAppWith(none, { ...production, SVC_OTP_SECRET: OTP_SECRET })
    await started.close()
  })

  it('is a random key per process outside production, with a warning', () => {
    const onRandom = vi.fn()
    const first = codeKeyFromEnv({ NODE_ENV: 'development' }, onRandom)
    const second = codeKeyFromEnv({ NODE_ENV: 'test' }, onRandom)
    expect([first.source, second.source]).toEqual(['random', 'random'])
    expect(keyBytes(first.key)).not.toBe(keyBytes(second.key))
    expect(onRandom).toHaveBeenCalledTimes(2)
  })

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
