import { afterEach, expect, it } from 'vitest'
import { ConfigError } from '../../../lib/env.js'
import { buildAppWith, buildTestApp, describePostgres, TEST_JWT_SECRET } from '../../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../../support/isolated-database.js'
import { dataKeysSetting, hs256Keys, newDataKey, spellings } from './keys.js'
import { academyWithSealedValues, secondStepStatus } from './sealed-fixtures.js'

// The start refuses, naming the kid and how many values it sealed, when sealed data needs a key the configuration
// lacks: removing a key must never silently lock a user out of the second step or leave a tenant's events unsigned.
// Each test has a database of its own, since the refusal is about every value of it: PostgreSQL only (the embedded
// store is one per test file).

const RECEIVER = 'http://127.0.0.1:9/hooks'
const OTP_SECRET = 'an-otp-secret-of-at-least-thirty-two-chars'
const none = async () => undefined
let iso: IsolatedDatabase | undefined

afterEach(async () => {
  await iso?.drop()
  iso = undefined
})

/** A database holding one academy's sealed values (a TOTP secret, its recovery codes' key, a webhook secret). */
async function databaseSealedWith(keys: Record<string, string | undefined>) {
  iso = await isolatedDatabase()
  const env = { DATABASE_URL: iso.url || undefined, SVC_WEBHOOK_ALLOW_PRIVATE: 'true', ...keys }
  const app = await buildTestApp(env)
  try {
    return { env, sealed: await academyWithSealedValues(app, iso.owner, RECEIVER) }
  } finally {
    await app.close()
  }
}

/** The refusal a start with `keys` over the database answers; fails the test when it starts. */
async function refusal(keys: Record<string, string | undefined>): Promise<string> {
  const started = await buildAppWith(none, { DATABASE_URL: iso!.url || undefined, ...keys }).then(
    async (app) => {
      await app.close()
      return 'started'
    },
    // A ConfigError, which server.ts prints as it is, without a stack.
    (error: unknown) => (error instanceof ConfigError ? error.message : `not a ConfigError: ${String(error)}`),
  )
  expect(started).not.toBe('started')
  return started
}

describePostgres('the start against what is sealed', () => {
  it('refuses the move from SVC_JWT_SECRET to signing keys that keeps no key of its data (SVC_OTP_SECRET instead)', async () => {
    await databaseSealedWith({})
    const message = await refusal({ SVC_JWT_SECRET: undefined, SVC_JWT_KEYS: hs256Keys(), SVC_OTP_SECRET: OTP_SECRET })
    expect(message).toContain(
      'SVC_DATA_KEYS: sealed data needs keys this configuration lacks, and would not open: kid "default" or "jwt" (sealed before key ids, ' +
        'by the key of SVC_OTP_SECRET or else SVC_JWT_SECRET) sealed 3 values (1 set of recovery codes, 1 TOTP secret, 1 webhook signing secret), ' +
        'which its key here does not open',
    )
    expect(message).toContain('The ring holds "default".')
    // Without any key for them: missing, not merely different.
    const missing = await refusal({ SVC_JWT_SECRET: undefined, SVC_JWT_KEYS: hs256Keys(), SVC_DATA_KEYS: dataKeysSetting(newDataKey('k2')) })
    expect(missing).toContain('kid "default" or "jwt" (sealed before key ids, by the key of SVC_OTP_SECRET or else SVC_JWT_SECRET) sealed 3 values (')
    expect(missing).not.toContain('does not open')
  })

  it('refuses a start whose SVC_DATA_KEYS lacks the kid of sealed values, naming it and the count, never a key; starts with it back', async () => {
    const [k1, k2] = [newDataKey('k1'), newDataKey('k2')]
    const { env, sealed } = await databaseSealedWith({ SVC_DATA_KEYS: dataKeysSetting(k1) })
    const message = await refusal({ SVC_DATA_KEYS: dataKeysSetting(k2) })
    expect(message).toMatch(/^Invalid configuration:\n {2}- SVC_DATA_KEYS: sealed data needs keys this configuration lacks/)
    expect(message).toContain('kid "k1" sealed 3 values (1 set of recovery codes, 1 TOTP secret, 1 webhook signing secret).')
    expect(message).toContain('The ring holds "k2", "jwt".')
    expect(message).toContain('npm run -s data-keys:reseal')
    for (const spelling of [...spellings(k1), ...spellings(k2)]) expect(message).not.toContain(spelling)

    const app = await buildTestApp({ ...env, SVC_DATA_KEYS: dataKeysSetting(k2, k1) })
    try {
      expect(await secondStepStatus(app, iso!.owner, sealed, 'TOTP')).toBe(200)
    } finally {
      await app.close()
    }
  })

  it('refuses a start that holds another key under the kid that sealed the values', async () => {
    await databaseSealedWith({ SVC_DATA_KEYS: dataKeysSetting(newDataKey('k1')) })
    const message = await refusal({ SVC_DATA_KEYS: dataKeysSetting(newDataKey('k1')) })
    expect(message).toContain('kid "k1" sealed 3 values (1 set of recovery codes, 1 TOTP secret, 1 webhook signing secret), which its key here does not open')
  })

  it('starts with the secret that sealed them, and with nothing sealed at all', async () => {
    await databaseSealedWith({ SVC_JWT_SECRET: TEST_JWT_SECRET })
    await (await buildAppWith(none, { DATABASE_URL: iso!.url || undefined })).close()
    await iso!.drop()
    iso = await isolatedDatabase()
    await (await buildAppWith(none, { DATABASE_URL: iso.url || undefined, SVC_DATA_KEYS: dataKeysSetting(newDataKey('k9')), SVC_JWT_SECRET: undefined, SVC_JWT_KEYS: hs256Keys() })).close()
  })
})
