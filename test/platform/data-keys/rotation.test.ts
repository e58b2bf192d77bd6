import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterEach, expect, it } from 'vitest'
import { runScriptSource } from '../../support/child-processes.js'
import { buildAppLoggingTo, buildTestApp, describePostgres, testEnv, TEST_JWT_SECRET } from '../../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../../support/isolated-database.js'
import { mfaCall } from '../../account-security/second-factor/mfa-bed.js'
import { bearerFor, insertMember } from '../../account-security/recovery-bed.js'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import { completedMessage, startReceiver, verified, type Receiver } from '../../events/delivery-bed.js'
import { dataKeysSetting, hs256Keys, newDataKey, spellings, type TestDataKey } from './keys.js'
import { academyWithSealedValues, secondStepStatus, type SealedAcademy } from './sealed-fixtures.js'

// A rotation of the data keys as an operator runs it (docs/operations.md#rotating-data-keys), on a database of its own
// with instances of each configuration: the new key put first, the reseal (npm run -s data-keys:reseal, in a process
// of its own as the runtime role, while an instance runs), then the old key removed. What was sealed must open at
// every step: TOTP and recovery codes sign in, webhook deliveries verify with the Standard Webhooks library.

let iso: IsolatedDatabase | undefined
const opened: Array<{ close(): Promise<unknown> }> = []

afterEach(async () => {
  for (const closable of opened.splice(0).reverse()) await closable.close()
  await iso?.drop()
  iso = undefined
})

async function start(keys: Record<string, string | undefined>, onLine?: (line: string) => void): Promise<FastifyInstance> {
  const overrides = { DATABASE_URL: iso!.url, SVC_WEBHOOK_ALLOW_PRIVATE: 'true', ...keys }
  const app = onLine ? await buildAppLoggingTo(testEnv({ ...overrides, LOG_LEVEL: 'trace' }), onLine) : await buildTestApp(overrides)
  opened.push(app)
  return app
}

async function receiver(): Promise<Receiver> {
  const started = await startReceiver()
  opened.push(started)
  return started
}

/** npm run -s data-keys:reseal with `keys`, as the runtime role; its exit code, and what it printed. */
async function reseal(keys: Record<string, string>) {
  const run = await runScriptSource('scripts/data-keys-reseal.ts', [], {
    NODE_ENV: 'test',
    DATABASE_URL: iso!.url,
    DATABASE_MIGRATION_URL: '',
    SVC_OTP_SECRET: '',
    SVC_JWT_SECRET: '',
    SVC_DATA_KEYS: '',
    ...keys,
  })
  return { ...run, report: run.code === 0 || run.stdout !== '' ? (JSON.parse(run.stdout) as Record<string, unknown>) : null }
}

/** Every sealed value of the database, as the owner reads it. */
async function storedSealedValues(): Promise<string[]> {
  const { rows } = await sql<{ value: string }>`
    select totp_secret as value from user_second_factors where totp_secret is not null
    union all select totp_pending_secret from user_second_factors where totp_pending_secret is not null
    union all select recovery_key_sealed from user_second_factors where recovery_key_sealed is not null
    union all select secret_sealed from webhook_endpoints`.execute(iso!.owner)
  return rows.map((row) => row.value)
}

/** One completed message's event for each academy, delivered by `app`, verified with each academy's own secret. */
async function deliveriesVerify(app: FastifyInstance, to: Receiver, academies: SealedAcademy[]): Promise<void> {
  const before = to.requests.length
  for (const sealed of academies) await completedMessage(app, iso!.owner, sealed.academy)
  expect(await app.webhooks.deliverer.runOnce()).toBe(academies.length)
  const requests = to.requests.slice(before)
  expect(requests).toHaveLength(academies.length)
  for (const sealed of academies) {
    const mine = requests.filter((request) => {
      try {
        verified(sealed.webhookSecret, request)
        return true
      } catch {
        return false
      }
    })
    expect(mine.map((request) => verified(sealed.webhookSecret, request).type)).toEqual(['sms.message.completed'])
  }
}

/** Both ways through the second step the member's enrolment gave: a TOTP code, and one of its recovery codes. */
async function signsIn(app: FastifyInstance, sealed: SealedAcademy, recoveryCode: string): Promise<void> {
  expect(await secondStepStatus(app, iso!.owner, sealed, 'TOTP')).toBe(200)
  expect(await secondStepStatus(app, iso!.owner, sealed, 'RECOVERY_CODE', recoveryCode)).toBe(200)
}

describePostgres('rotating the data keys', () => {
  it('keeps what the old key sealed open once a new key is first, seals new values with the first key, and logs no key', async () => {
    iso = await isolatedDatabase()
    const to = await receiver()
    const before = await start({})
    const old = await academyWithSealedValues(before, iso.owner, to.url)
    await before.close()

    const k2 = newDataKey('k2')
    const lines: string[] = []
    const promoted = await start({ SVC_DATA_KEYS: dataKeysSetting(k2) }, (line) => lines.push(line))
    await signsIn(promoted, old, old.totp.recoveryCodes[0]!)
    const fresh = await academyWithSealedValues(promoted, iso.owner, to.url)
    await signsIn(promoted, fresh, fresh.totp.recoveryCodes[0]!)
    await deliveriesVerify(promoted, to, [old, fresh])

    const values = await storedSealedValues()
    // The old academy's TOTP and webhook secrets (its recovery codes have no key of their own), the new one's three.
    expect(values.filter((value) => value.startsWith('v1.'))).toHaveLength(2)
    expect(values.filter((value) => value.startsWith('v2.k2.'))).toHaveLength(3)
    expect(lines.length).toBeGreaterThan(20)
    for (const spelling of spellings(k2)) expect(lines.filter((line) => line.includes(spelling))).toEqual([])
  }, 60_000)

  it('reseals every value under the first key with counts per kind, idempotently, beside a running instance; then the old key can go', async () => {
    iso = await isolatedDatabase()
    const to = await receiver()
    const before = await start({})
    const old = await academyWithSealedValues(before, iso.owner, to.url)
    // An enrolment started and not yet confirmed: its pending secret is sealed too.
    const pendingMember = await insertMember(iso.owner, old.tenant)
    const pending = await mfaCall(before, await bearerFor(before, pendingMember, old.tenant), '/totp', { password: pendingMember.password })
    expect(pending.statusCode, pending.body).toBe(200)
    await before.close()

    const k2 = newDataKey('k2')
    const running = await start({ SVC_DATA_KEYS: dataKeysSetting(k2) })
    const fresh = await academyWithSealedValues(running, iso.owner, to.url)

    const first = await reseal({ SVC_DATA_KEYS: dataKeysSetting(k2), SVC_JWT_SECRET: TEST_JWT_SECRET })
    expect(first).toMatchObject({ code: 0, stderr: '' })
    expect(first.report).toEqual({
      firstKid: 'k2',
      resealed: { totpSecrets: 1, pendingTotpSecrets: 1, recoveryCodeSets: 1, webhookSecrets: 1 },
      unopenable: { totpSecrets: 0, pendingTotpSecrets: 0, recoveryCodeSets: 0, webhookSecrets: 0 },
      sealedByKid: { k2: 7 },
    })
    for (const spelling of spellings(k2)) expect(first.stdout + first.stderr).not.toContain(spelling)
    const values = await storedSealedValues()
    expect(values).toHaveLength(7)
    expect(values.filter((value) => !value.startsWith('v2.k2.'))).toEqual([])
    // The instance that ran through it still opens everything.
    await signsIn(running, old, old.totp.recoveryCodes[0]!)

    const second = await reseal({ SVC_DATA_KEYS: dataKeysSetting(k2), SVC_JWT_SECRET: TEST_JWT_SECRET })
    expect(second.report).toMatchObject({ resealed: { totpSecrets: 0, pendingTotpSecrets: 0, recoveryCodeSets: 0, webhookSecrets: 0 }, sealedByKid: { k2: 7 } })
    expect(await storedSealedValues()).toEqual(values)
    await running.close()

    // The old key removed: SVC_JWT_SECRET unset (tokens signed by keys), SVC_DATA_KEYS the new key alone.
    const after = await start({ SVC_DATA_KEYS: dataKeysSetting(k2), SVC_JWT_SECRET: undefined, SVC_JWT_KEYS: hs256Keys() })
    await signsIn(after, old, old.totp.recoveryCodes[1]!)
    await signsIn(after, fresh, fresh.totp.recoveryCodes[0]!)
    await deliveriesVerify(after, to, [old, fresh])
    const { secret } = pending.json() as { secret: string }
    const confirmed = await mfaCall(after, await bearerFor(after, pendingMember, old.tenant), '/totp/confirm', { code: totpCode(secret) })
    expect(confirmed.statusCode, confirmed.body).toBe(200)
  }, 120_000)

  it('moves a rotation between two keys of SVC_DATA_KEYS the same way, and leaves what no key opens, exiting 1', async () => {
    iso = await isolatedDatabase()
    const to = await receiver()
    const [k1, k2] = [newDataKey('k1'), newDataKey('k2')]
    const before = await start({ SVC_DATA_KEYS: dataKeysSetting(k1) })
    const old = await academyWithSealedValues(before, iso.owner, to.url)
    await before.close()

    const lacking = await reseal({ SVC_DATA_KEYS: dataKeysSetting(k2) })
    expect(lacking.code).toBe(1)
    expect(lacking.stderr).toBe('error: 3 sealed value(s) open with no key of the ring and were left as they are (see "unopenable")\n')
    expect(lacking.report).toMatchObject({
      resealed: { totpSecrets: 0, pendingTotpSecrets: 0, recoveryCodeSets: 0, webhookSecrets: 0 },
      unopenable: { totpSecrets: 1, pendingTotpSecrets: 0, recoveryCodeSets: 1, webhookSecrets: 1 },
      sealedByKid: { k1: 3 },
    })

    const moved = await reseal({ SVC_DATA_KEYS: dataKeysSetting(k2, k1) })
    expect(moved.report).toMatchObject({ resealed: { totpSecrets: 1, recoveryCodeSets: 1, webhookSecrets: 1 }, sealedByKid: { k2: 3 } })
    const after = await start({ SVC_DATA_KEYS: dataKeysSetting(k2) })
    await signsIn(after, old, old.totp.recoveryCodes[0]!)
    await deliveriesVerify(after, to, [old])
  }, 120_000)
})
