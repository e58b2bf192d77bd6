import { createSecretKey, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { KeyRing } from '../../../lib/crypto/key-ring.js'
import { openSecret, sealSecret } from '../../../lib/account-security/second-factor/sealed-secret.js'
import { newTotpSecret } from '../../../lib/account-security/second-factor/totp.js'

/** A ring of one legacy key, as a deployment without SVC_DATA_KEYS has: it seals `v1.`, as before key ids. */
const ringOf = (kid = 'jwt'): KeyRing => ({ keys: [{ kid, key: createSecretKey(randomBytes(32)) }], legacyKid: kid })
const key = ringOf()
const owner = { tenantId: 7, userId: 42 }

/** `stored` with one byte of its sealed body flipped at `index` (negative: from the end). */
function flipped(stored: string, index: number): string {
  const [version, body] = stored.split('.') as [string, string]
  const bytes = Buffer.from(body, 'base64url')
  const at = index < 0 ? bytes.length + index : index
  bytes[at] = bytes[at]! ^ 0x01
  return `${version}.${bytes.toString('base64url')}`
}

describe('sealed TOTP secrets (lib/account-security/second-factor/sealed-secret.ts)', () => {
  it('open to the secret sealed, for the same key and owner', () => {
    const secret = newTotpSecret()
    const stored = sealSecret(key, owner, secret)
    expect(stored).toMatch(/^v1\.[A-Za-z0-9_-]+$/)
    expect(stored).not.toContain(secret)
    expect(openSecret(key, owner, stored)).toBe(secret)
    expect(openSecret(key, { ...owner }, stored)).toBe(secret)
  })

  it('seal the same secret differently each time (a fresh IV), each opening to it', () => {
    const secret = newTotpSecret()
    const first = sealSecret(key, owner, secret)
    const second = sealSecret(key, owner, secret)
    expect(first).not.toBe(second)
    expect([openSecret(key, owner, first), openSecret(key, owner, second)]).toEqual([secret, secret])
  })

  it("open nothing for another user or another tenant: a row copied to another user's is worthless", () => {
    const stored = sealSecret(key, owner, newTotpSecret())
    const others = [
      { tenantId: 7, userId: 43 },
      { tenantId: 8, userId: 42 },
      // Parts that would run together if they were only concatenated.
      { tenantId: 74, userId: 2 },
      { tenantId: 42, userId: 7 },
    ]
    for (const other of others) expect({ other, opened: openSecret(key, other, stored) }).toEqual({ other, opened: null })
  })

  it('open nothing under another key', () => {
    const stored = sealSecret(key, owner, newTotpSecret())
    expect(openSecret(ringOf(), owner, stored)).toBeNull()
  })

  it('open nothing once altered: IV, ciphertext or tag', () => {
    const stored = sealSecret(key, owner, newTotpSecret())
    for (const index of [0, 11, 12, 20, -17, -1]) {
      expect({ index, opened: openSecret(key, owner, flipped(stored, index)) }).toEqual({ index, opened: null })
    }
  })

  it('open nothing that is not a sealed secret of this version', () => {
    const stored = sealSecret(key, owner, newTotpSecret())
    const body = stored.slice('v1.'.length)
    const malformed = ['', 'v1', 'v1.', `v2.${body}`, body, `v1.${body.slice(0, 30)}`, 'v1.!!!!', newTotpSecret()]
    for (const text of malformed) expect({ text, opened: openSecret(key, owner, text) }).toEqual({ text, opened: null })
  })
})
