import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { loadEnv } from '../../lib/env.js'
import { listeningAddress, startScriptSource } from '../support/child-processes.js'
import { configProblems } from '../support/config-problems.js'
import { TEST_JWT_SECRET } from '../support/helper.js'

const EXTSMS = {
  SVC_SMS_PROVIDER: 'extsms',
  SVC_SMS_EXTSMS_API_KEY: 'key',
  SVC_SMS_EXTSMS_API_SECRET: 'secret',
  SVC_SMS_EXTSMS_BASE_URL: 'http://127.0.0.1:9',
  SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 'webhook-token',
}
const CREDENTIALS = Object.keys(EXTSMS).filter((key) => key !== 'SVC_SMS_PROVIDER')

const without = (...keys: string[]) => Object.fromEntries(Object.entries(EXTSMS).filter(([key]) => !keys.includes(key)))

describe('SMS provider configuration', () => {
  it('defaults to the mock provider, which needs no credentials', () => {
    expect(loadEnv({}).SVC_SMS_PROVIDER).toBe('mock')
    expect(configProblems({ SVC_SMS_PROVIDER: 'mock' })).toEqual([])
  })

  it('accepts extsms with every credential and the webhook token', () => {
    expect(loadEnv(EXTSMS)).toMatchObject(EXTSMS)
  })

  it('names all four settings when extsms has none of them', () => {
    expect(configProblems({ SVC_SMS_PROVIDER: 'extsms' })).toEqual(
      CREDENTIALS.map((key) => `${key}: required when SVC_SMS_PROVIDER=extsms`),
    )
  })

  it.each(CREDENTIALS)('names %s alone when only it is missing', (key) => {
    expect(configProblems(without(key))).toEqual([`${key}: required when SVC_SMS_PROVIDER=extsms`])
  })

  it('treats a blank credential as missing', () => {
    expect(configProblems({ ...EXTSMS, SVC_SMS_EXTSMS_WEBHOOK_TOKEN: '   ' })).toEqual([
      'SVC_SMS_EXTSMS_WEBHOOK_TOKEN: required when SVC_SMS_PROVIDER=extsms',
    ])
  })

  it('refuses an unknown provider and a base URL that is not http(s)', () => {
    expect(configProblems({ SVC_SMS_PROVIDER: 'twilio' }).some((problem) => problem.startsWith('SVC_SMS_PROVIDER:'))).toBe(true)
    expect(configProblems({ ...EXTSMS, SVC_SMS_EXTSMS_BASE_URL: 'ftp://sms.example' }).some((problem) => problem.startsWith('SVC_SMS_EXTSMS_BASE_URL:'))).toBe(true)
  })

  it('refuses with extsms a lease that does not outlast one provider call by more than a second, naming both settings', () => {
    expect(configProblems({ ...EXTSMS, SVC_SMS_LEASE_SECONDS: '11' })).toEqual([
      'SVC_SMS_LEASE_SECONDS: must outlast SVC_SMS_PROVIDER_TIMEOUT_MS (10000 ms) by more than 1000 ms (got 11)',
    ])
    expect(configProblems({ ...EXTSMS, SVC_SMS_LEASE_SECONDS: '12' })).toEqual([])
    expect(configProblems({ ...EXTSMS, SVC_SMS_LEASE_SECONDS: '5', SVC_SMS_PROVIDER_TIMEOUT_MS: '3999' })).toEqual([])
    expect(configProblems({ ...EXTSMS, SVC_SMS_LEASE_SECONDS: '5', SVC_SMS_PROVIDER_TIMEOUT_MS: '4000' })).toHaveLength(1)
    // The mock answers in-process: no call to outlast.
    expect(configProblems({ SVC_SMS_LEASE_SECONDS: '5' })).toEqual([])
  })

  it('leaves the internal signing secret optional but refuses a short one', () => {
    expect(loadEnv({}).SVC_INTERNAL_HMAC_SECRET).toBeUndefined()
    expect(configProblems({ SVC_INTERNAL_HMAC_SECRET: 'short' })[0]).toMatch(/^SVC_INTERNAL_HMAC_SECRET:/)
  })
})

/** Starts server.ts with only the given settings (no inherited SVC_* variables). */
function startServer(env: Record<string, string>) {
  return startScriptSource('server.ts', [], {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // Lets @fastify/autoload import the .ts plugins and routes under `--import tsx`.
    FASTIFY_AUTOLOAD_TYPESCRIPT: '1',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    ...env,
  })
}

describe('server start-up with SVC_SMS_PROVIDER=extsms', () => {
  it('refuses to start, naming each missing credential and not the given ones', async () => {
    const { child, output } = startServer(without('SVC_SMS_EXTSMS_API_SECRET', 'SVC_SMS_EXTSMS_WEBHOOK_TOKEN'))
    const [code] = await once(child, 'exit')
    expect(code).toBe(1)
    expect(output()).toContain('SVC_SMS_EXTSMS_API_SECRET: required when SVC_SMS_PROVIDER=extsms')
    expect(output()).toContain('SVC_SMS_EXTSMS_WEBHOOK_TOKEN: required when SVC_SMS_PROVIDER=extsms')
    expect(output()).not.toContain('SVC_SMS_EXTSMS_API_KEY')
    expect(output()).not.toContain('SVC_SMS_EXTSMS_BASE_URL')
    expect(output()).not.toContain('    at ')
  })

  it('starts when every setting is given', async () => {
    // On the embedded run DATABASE_URL is empty: the server's store goes to a scratch directory, never ./.data.
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-provider-'))
    const server = startServer({
      ...EXTSMS,
      DATABASE_URL: inject('databaseUrl'),
      SVC_DATA_DIR: dataDir,
      PORT: '0',
      SVC_MIGRATE_ON_START: 'false',
      SVC_SMS_DISPATCHER: 'off',
      // The run's: its key opens what the shared database holds sealed, which the start checks.
      SVC_JWT_SECRET: TEST_JWT_SECRET,
    })
    const { child } = server
    try {
      const address = await listeningAddress(server, 20_000)
      expect((await fetch(`${address}/actuator/health`)).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
      if (child.exitCode === null) await once(child, 'exit')
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
