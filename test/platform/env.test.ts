import { readFileSync } from 'node:fs'
import { parseEnv } from 'node:util'
import { describe, expect, it } from 'vitest'
import { EnvSchema, loadEnv } from '../../lib/env.js'
import { configProblems } from '../support/config-problems.js'

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const env = loadEnv({})
    expect(env).toMatchObject({
      HOST: '127.0.0.1',
      PORT: 8080,
      SVC_ACCESS_TTL: 3600,
      SVC_REFRESH_TTL: 604800,
      SVC_COOKIE_SECURE: true,
      SVC_COOKIE_SAMESITE: 'lax',
      SVC_BCRYPT_COST: 10,
      SVC_SMS_PROVIDER: 'mock',
      SVC_SMS_MAX_ATTEMPTS: 5,
      SVC_SMS_BATCH_SIZE: 100,
      SVC_SMS_SCHEDULER_CRON: '*/5 * * * * *',
      SVC_SMS_PRICE_ALIMTALK: 13,
      SVC_MIGRATE_ON_START: true,
    })
    expect(env.DATABASE_URL).toBeUndefined()
  })

  it('converts text values to their types', () => {
    const env = loadEnv({ PORT: '9090', SVC_COOKIE_SECURE: 'false', SVC_COOKIE_DOMAIN: '', SVC_SMS_PRICE_ALIMTALK: '9' })
    expect(env.PORT).toBe(9090)
    expect(env.SVC_SMS_PRICE_ALIMTALK).toBe(9)
    expect(env.SVC_COOKIE_SECURE).toBe(false)
    expect(env.SVC_COOKIE_DOMAIN).toBeUndefined()
  })

  it('names every invalid variable in one error', () => {
    const problems = configProblems({ PORT: 'eighty', SVC_BCRYPT_COST: '99', SVC_COOKIE_SAMESITE: 'sometimes', DATABASE_URL: 'mysql://x' })
    for (const name of ['PORT', 'SVC_BCRYPT_COST', 'SVC_COOKIE_SAMESITE', 'DATABASE_URL']) {
      expect(problems.some((problem) => problem.startsWith(`${name}:`))).toBe(true)
    }
  })

  it('repeats a refused value, but never a secret one: a secret, token or database URL is named by its length', () => {
    const secrets = {
      SVC_JWT_SECRET: 'short-but-real-secret',
      SVC_INTERNAL_HMAC_SECRET: 'hmac-too-short',
      SVC_METRICS_TOKEN: 'metrics-short',
      DATABASE_URL: 'mysql://admin:hunter2-password@db/svc',
      DATABASE_MIGRATION_URL: 'mariadb://owner:owner-password@db/svc',
    }
    const problems = configProblems({ ...secrets, PORT: 'eighty' })
    expect(problems).toContain('PORT: Expected integer (got "eighty")')
    for (const [name, value] of Object.entries(secrets)) {
      expect(problems.find((problem) => problem.startsWith(`${name}:`))).toMatch(new RegExp(`\\(got ${value.length} characters, not shown\\)$`))
      expect(problems.join('\n')).not.toContain(value)
    }
    expect(problems.join('\n')).not.toMatch(/hunter2|owner-password/)
  })

  it('takes an IANA time zone for SVC_TIME_ZONE (default Asia/Seoul) and refuses a name no time zone has', () => {
    expect(loadEnv({}).SVC_TIME_ZONE).toBe('Asia/Seoul')
    expect(loadEnv({ SVC_TIME_ZONE: 'America/New_York' }).SVC_TIME_ZONE).toBe('America/New_York')
    expect(configProblems({ SVC_TIME_ZONE: 'Mars/Olympus_Mons' })).toEqual([
      'SVC_TIME_ZONE: not an IANA time zone name such as Asia/Seoul or UTC (got "Mars/Olympus_Mons")',
    ])
  })

  it('accepts enumerated settings of an earlier deployment in any case', () => {
    const env = loadEnv({
      NODE_ENV: 'Production',
      SVC_JWT_SECRET: 'x'.repeat(32),
      LOG_LEVEL: 'WARN',
      SVC_COOKIE_SAMESITE: 'Lax',
      SVC_SMS_PROVIDER: 'MOCK',
      SVC_SMS_DISPATCHER: 'Off',
    })
    expect(env).toMatchObject({
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      SVC_COOKIE_SAMESITE: 'lax',
      SVC_SMS_PROVIDER: 'mock',
      SVC_SMS_DISPATCHER: 'off',
    })
    expect(configProblems({ NODE_ENV: 'PRODUCTION' })).toEqual(['SVC_JWT_SECRET or SVC_JWT_KEYS: one is required when NODE_ENV=production'])
    expect(configProblems({ SVC_SMS_PROVIDER: 'ExtSms' })).toContain('SVC_SMS_EXTSMS_API_KEY: required when SVC_SMS_PROVIDER=extsms')
  })

  it('takes consent days with fractions, and refuses to start unless the notice comes before the consent lapses', () => {
    expect(loadEnv({})).toMatchObject({ SVC_AD_CONSENT_DAYS: 730, SVC_AD_CONSENT_NOTICE_DAYS: 700, SVC_OPT_OUT_SYNC_SECONDS: 600 })
    expect(loadEnv({ SVC_AD_CONSENT_DAYS: '1.5', SVC_AD_CONSENT_NOTICE_DAYS: '0.25', SVC_OPT_OUT_SYNC_SECONDS: '0' })).toMatchObject({
      SVC_AD_CONSENT_DAYS: 1.5,
      SVC_AD_CONSENT_NOTICE_DAYS: 0.25,
      SVC_OPT_OUT_SYNC_SECONDS: 0,
    })
    for (const notice of ['730', '800']) {
      const problems = configProblems({ SVC_AD_CONSENT_NOTICE_DAYS: notice })
      expect(problems).toHaveLength(1)
      expect(problems[0]).toMatch(/^SVC_AD_CONSENT_NOTICE_DAYS: must be less than SVC_AD_CONSENT_DAYS \(730\)/)
    }
    expect(configProblems({ SVC_AD_CONSENT_DAYS: '0' }).map((problem) => problem.split(':')[0])).toContain('SVC_AD_CONSENT_DAYS')
  })

  it('names a malformed scheduler cron expression among the other problems at start', () => {
    expect(loadEnv({ SVC_SMS_SCHEDULER_CRON: '0 */2 * * * *' }).SVC_SMS_SCHEDULER_CRON).toBe('0 */2 * * * *')
    for (const bad of ['every 5 seconds', '61 * * * *', '*/5 * * * * * *']) {
      const problems = configProblems({ SVC_SMS_SCHEDULER_CRON: bad, PORT: 'eighty' })
      expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual(['PORT', 'SVC_SMS_SCHEDULER_CRON'])
      expect(problems.find((problem) => problem.startsWith('SVC_SMS_SCHEDULER_CRON:'))).toContain(JSON.stringify(bad))
    }
  })

  it('refuses a short JWT secret and requires a secret or a key set in production', () => {
    expect(configProblems({ SVC_JWT_SECRET: 'short' })[0]).toMatch(/^SVC_JWT_SECRET:/)
    expect(configProblems({ NODE_ENV: 'production' })).toEqual([
      'SVC_JWT_SECRET or SVC_JWT_KEYS: one is required when NODE_ENV=production',
    ])
  })

  it('names each missing extsms credential', () => {
    const problems = configProblems({ SVC_SMS_PROVIDER: 'extsms', SVC_SMS_EXTSMS_API_KEY: 'key' })
    expect(problems).toEqual([
      'SVC_SMS_EXTSMS_API_SECRET: required when SVC_SMS_PROVIDER=extsms',
      'SVC_SMS_EXTSMS_BASE_URL: required when SVC_SMS_PROVIDER=extsms',
      'SVC_SMS_EXTSMS_WEBHOOK_TOKEN: required when SVC_SMS_PROVIDER=extsms',
    ])
  })

  it('lists every variable with its default in .env.example', () => {
    const example = parseEnv(readFileSync(new URL('../../.env.example', import.meta.url), 'utf8'))
    expect(Object.keys(example).sort()).toEqual(Object.keys(EnvSchema.properties).sort())
    const defaults = loadEnv({})
    for (const [key, value] of Object.entries(example)) {
      const expected = defaults[key as keyof typeof defaults]
      expect({ key, value }).toEqual({ key, value: expected === undefined ? '' : String(expected) })
    }
  })
})
