import { createSecretKey, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { dataKeyRingFromEnv } from '../../../lib/data-keys/ring-from-env.js'
import type { KeyRing } from '../../../lib/crypto/key-ring.js'
import { firstKeyPrefix, seal, sealedKid, unseal } from '../../../lib/crypto/seal.js'
import { hashRecoveryCode } from '../../../lib/account-security/second-factor/recovery-codes.js'
import { openRecoveryKey } from '../../../lib/account-security/second-factor/recovery-key.js'
import { openSecret } from '../../../lib/account-security/second-factor/sealed-secret.js'
import { mfaSettings } from '../../../lib/account-security/second-factor/settings.js'
import { codeMatches } from '../../../lib/account-security/codes/codes.js'
import { oneTimeCodeSettings } from '../../../lib/account-security/codes/settings.js'
import { loadEnv } from '../../../lib/env.js'
import { secretSealingKeys, unsealSigningSecret } from '../../../lib/events/signing-secret.js'
import { dataKeysSetting, newDataKey } from '../data-keys/keys.js'

const key = () => createSecretKey(randomBytes(32))
const ring = (kids: string[], legacyKid: string | null = null): KeyRing => {
  const [first, ...rest] = kids.map((kid) => ({ kid, key: key() }))
  return { keys: [first!, ...rest], legacyKid }
}
/** The same keys in another order, or with some left out: a later configuration of one deployment. */
const reordered = (from: KeyRing, kids: string[]): KeyRing => {
  const [first, ...rest] = kids.map((kid) => from.keys.find((entry) => entry.kid === kid)!)
  return { keys: [first!, ...rest], legacyKid: from.legacyKid }
}
const context = 'totp:7:42'

describe('sealed values name their key (lib/crypto/seal.ts)', () => {
  it('are sealed by the first key, as v2.<kid>., and open with every ring that holds that key, wherever it stands', () => {
    const old = ring(['k1', 'k2'])
    const stored = seal(old, context, 'secret')
    expect(stored).toMatch(/^v2\.k1\.[A-Za-z0-9_-]+$/)
    expect([sealedKid(stored), firstKeyPrefix(old)]).toEqual(['k1', 'v2.k1.'])
    const promoted = reordered(old, ['k2', 'k1'])
    expect(unseal(promoted, context, stored)).toBe('secret')
    expect(seal(promoted, context, 'new')).toMatch(/^v2\.k2\./)
    expect(unseal(reordered(old, ['k2']), context, stored)).toBeNull()
    expect(unseal(old, 'totp:7:43', stored)).toBeNull()
  })

  it('are sealed as v1. (no kid) while the legacy key is first, as before key ids, and a v1 value opens with the legacy key alone', () => {
    const legacy = ring(['jwt', 'k2'], 'jwt')
    const stored = seal(legacy, context, 'secret')
    expect(stored).toMatch(/^v1\.[A-Za-z0-9_-]+$/)
    expect([sealedKid(stored), firstKeyPrefix(legacy)]).toEqual([null, 'v1.'])
    expect(unseal(reordered(legacy, ['k2', 'jwt']), context, stored)).toBe('secret')
    expect(unseal({ keys: [legacy.keys[1]!], legacyKid: null }, context, stored)).toBeNull()
    for (const text of ['', 'v1', 'v2.k1', 'v2..abc', 'v3.k1.abc', `v2.k1.${stored.slice(3)}.x`]) expect(sealedKid(text)).toBeUndefined()
  })
})

// Sealed by the release before key ids (`v1.`, under the one key SVC_OTP_SECRET or SVC_JWT_SECRET gave), for tenant 7
// and user 42: what a database upgraded from it holds. The ring of one the same setting makes must open all of it,
// and so must every later ring that keeps that setting beside SVC_DATA_KEYS.
const RELEASE_BEFORE_KEY_IDS = {
  SVC_OTP_SECRET: {
    secret: 'an-otp-secret-of-at-least-thirty-two-chars',
    totp: 'v1.c7R6x5ihAYuXq32XSjgRvHZ43-2MHxu2LTk3PaUFDAyWsuTYQeHDn6eZDnAgOMDJaIyjK-j_G5CRaKMp',
    recovery: '9d0126463362a7d9b83a164119385692e696597b53106512e7495da4ff0503ca',
    webhook: 'v1.X4QhrpR8JxSmg9OoqFwSYIQMnwM2DVgzE4kYj3eWQAx2jl5mHmXC8vFad9Q7t8O2oReoHX0dvpQHD2F9_32BVIEx70lFENtNXIrh_Ok1',
    code: '8461bbc2d09a97d2d38786823afb92e2e1710c9cf0e672429e10aa72bb303d09',
  },
  SVC_JWT_SECRET: {
    secret: 'a-jwt-secret-of-at-least-thirty-two-chars!',
    totp: 'v1.lYYIhO6rGb9Dni9WqnYl3QfX9xl1K4pYNjOEWTPeZn5k0hE814ZixwQts9vZwwqa4omA4MG_1Dt5YQ8N',
    recovery: 'c62e7248ac2d592b6eb83eae8e68136ec352b854a6ed572f6a5123a0d0b9a0dc',
    webhook: 'v1.R2jDKYmfdoU11nZkKgi_E5gR-Z2TyNOUaICK8rZDbMN-1cIXnWGVXaw50XiAUhTfTrq_wzQh9API2J-eaUp6LutV9z5vQmpDEaDXgbn6',
    code: '8b9d8cd1b04d6fee2ca06319f2af972397e782abea12e43918f91566eebf1df5',
  },
} as const
const TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'
const WEBHOOK = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ='
const owner = { tenantId: 7, userId: 42 }
const binding = { ...owner, purpose: 'PASSWORD_RESET' as const, phone: '01012345678' }

describe('values stored by the release before key ids', () => {
  for (const [setting, stored] of Object.entries(RELEASE_BEFORE_KEY_IDS)) {
    const kid = setting === 'SVC_OTP_SECRET' ? 'default' : 'jwt'
    for (const [label, extra] of [['alone', {}], ['beside SVC_DATA_KEYS', { SVC_DATA_KEYS: dataKeysSetting(newDataKey('k2')) }]] as const) {
      it(`open with the ring of ${setting} ${label} (kid ${kid}): TOTP secret, recovery code, webhook secret, one-time code`, () => {
        const dataKeys = dataKeyRingFromEnv({ NODE_ENV: 'production', [setting]: stored.secret, ...extra }).ring
        expect(dataKeys.legacyKid).toBe(kid)
        const mfa = mfaSettings({ SVC_MFA_TOKEN_TTL_SECONDS: 300 }, dataKeys)
        expect(openSecret(mfa.keys, owner, stored.totp)).toBe(TOTP)
        // A set from before key ids has no key of its own (null): it is the legacy key's.
        expect(hashRecoveryCode(openRecoveryKey(mfa.keys, owner, null)!, owner, 'k7m2p-x9qrt')).toBe(stored.recovery)
        expect(unsealSigningSecret(secretSealingKeys(dataKeys), 7, stored.webhook)).toBe(WEBHOOK)
        const codes = oneTimeCodeSettings(loadEnv({}), dataKeys)
        expect([codes.key, ...(codes.olderKeys ?? [])].some((candidate) => codeMatches(candidate, binding, '123456', stored.code))).toBe(true)
      })
    }
  }

  it("do not open under the other secret's key: that of SVC_OTP_SECRET opens nothing SVC_JWT_SECRET's sealed", () => {
    const otp = mfaSettings({ SVC_MFA_TOKEN_TTL_SECONDS: 300 }, dataKeyRingFromEnv({ NODE_ENV: 'production', SVC_OTP_SECRET: RELEASE_BEFORE_KEY_IDS.SVC_OTP_SECRET.secret }).ring)
    expect(openSecret(otp.keys, owner, RELEASE_BEFORE_KEY_IDS.SVC_JWT_SECRET.totp)).toBeNull()
  })
})
