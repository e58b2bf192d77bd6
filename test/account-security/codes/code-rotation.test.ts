import { describe, expect, it } from 'vitest'
import { replaceCode } from '../../../db/repos/account-security/one-time-codes.js'
import { withTenant } from '../../../db/tenant-transaction.js'
import { dataKeyRingFromEnv } from '../../../lib/data-keys/ring-from-env.js'
import { loadEnv } from '../../../lib/env.js'
import { checkCode } from '../../../lib/account-security/codes/check-code.js'
import { hashCode, phoneKeyOf, type CodeBinding } from '../../../lib/account-security/codes/codes.js'
import { oneTimeCodeSettings } from '../../../lib/account-security/codes/settings.js'
import { dataKeysSetting, newDataKey } from '../../platform/data-keys/keys.js'
import { createTenant, insertUser, owner } from '../../support/fixtures.js'
import { useTestApp } from '../../support/helper.js'
import { uniquePhone } from '../recovery-bed.js'

// One-time codes under a rotation of the data keys: a code is hashed under the first key and no kid is kept with it,
// so checking tries every key of the ring, and a code issued before a new key was put first verifies while it lives.

const app = useTestApp()
const [k1, k2] = [newDataKey('k1'), newDataKey('k2')]
const settingsFor = (...keys: Array<{ kid: string; key: string }>) =>
  oneTimeCodeSettings(loadEnv({}), dataKeyRingFromEnv({ NODE_ENV: 'test', SVC_DATA_KEYS: dataKeysSetting(...keys) }).ring)

async function slot(): Promise<CodeBinding> {
  const tenant = await createTenant()
  const user = await insertUser(tenant)
  const phone = uniquePhone()
  await owner().updateTable('users').set({ phone }).where('id', '=', user.id).execute()
  return { tenantId: tenant.id, userId: user.id, purpose: 'PASSWORD_RESET', phone }
}

/** Stores `code` as a ring of `keys` issues it: hashed under the first key. */
const store = (binding: CodeBinding, code: string, settings: ReturnType<typeof settingsFor>) =>
  withTenant(app.current.db, binding.tenantId, (trx) =>
    replaceCode(trx, { ...binding, codeHash: hashCode(settings.key, binding, code), ttlSeconds: 300, resendSeconds: 0 }),
  )

const check = (binding: CodeBinding, code: string, settings: ReturnType<typeof settingsFor>) =>
  withTenant(app.current.db, binding.tenantId, (trx) => checkCode(trx, settings, binding, code))

describe('one-time codes across a rotation of the data keys', () => {
  it('verifies a code issued under the old first key once a new key is first, and not once the old key is gone', async () => {
    const [before, promoted, removed] = [settingsFor(k1), settingsFor(k2, k1), settingsFor(k2)]
    const binding = await slot()
    await store(binding, '042917', before)
    expect(await check(binding, '042917', promoted)).toBe('valid')

    const other = await slot()
    await store(other, '042917', before)
    // Not a lockout: the code dies as an expired one would, and the user asks for another.
    expect(await check(other, '042917', removed)).toBe('wrong')
    await store(other, '318224', removed)
    expect(await check(other, '318224', removed)).toBe('valid')
  })

  it('keys new codes and the per-number counter by the first key', () => {
    const binding: CodeBinding = { tenantId: 1, userId: 2, purpose: 'PASSWORD_RESET', phone: '01012345678' }
    const [old, promoted] = [settingsFor(k1), settingsFor(k2, k1)]
    expect(hashCode(promoted.key, binding, '123456')).toBe(hashCode(settingsFor(k2).key, binding, '123456'))
    expect(hashCode(promoted.key, binding, '123456')).not.toBe(hashCode(old.key, binding, '123456'))
    // The day's count for a number starts afresh under a new first key (docs/security.md#one-time-codes).
    expect(phoneKeyOf(promoted.key, binding.phone)).not.toBe(phoneKeyOf(old.key, binding.phone))
  })
})
