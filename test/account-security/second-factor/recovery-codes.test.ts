import { createSecretKey, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashRecoveryCode, newRecoveryCodes, normaliseRecoveryCode, RECOVERY_CODE_COUNT } from '../../../lib/account-security/second-factor/recovery-codes.js'

const key = createSecretKey(randomBytes(32))
const owner = { tenantId: 7, userId: 42 }
// Lowercase letters and digits without 0, 1, l and o.
const CODE = /^[a-km-np-z2-9]{5}-[a-km-np-z2-9]{5}$/

describe('recovery codes (lib/account-security/second-factor/recovery-codes.ts)', () => {
  it('come ten to a set, all different, like k7m2p-x9qrt', () => {
    const codes = newRecoveryCodes()
    expect(RECOVERY_CODE_COUNT).toBe(10)
    expect(codes).toHaveLength(10)
    expect(new Set(codes).size).toBe(10)
    for (const code of codes) expect(code).toMatch(CODE)
  })

  it('never use the characters misread from paper (0, 1, l, o), and use all the others', () => {
    const letters = new Set(Array.from({ length: 100 }, newRecoveryCodes).flat().join('').replaceAll('-', ''))
    for (const misread of ['0', '1', 'l', 'o']) expect(letters.has(misread)).toBe(false)
    expect(letters.size).toBe(32)
  })

  it('differ from set to set', () => {
    const sets = Array.from({ length: 20 }, newRecoveryCodes).flat()
    expect(new Set(sets).size).toBe(sets.length)
  })

  it('are read as typed: case, spaces and dashes do not matter', () => {
    expect(normaliseRecoveryCode('k7m2p-x9qrt')).toBe('k7m2px9qrt')
    expect(normaliseRecoveryCode('K7M2P-X9QRT')).toBe('k7m2px9qrt')
    expect(normaliseRecoveryCode(' k7m2p x9qrt ')).toBe('k7m2px9qrt')
    expect(normaliseRecoveryCode('k7m2px9qrt')).toBe('k7m2px9qrt')
    expect(normaliseRecoveryCode('k7-m2p--x9\tqrt')).toBe('k7m2px9qrt')
  })

  it('are kept as a keyed hash naming no code, the same for every way of typing one', () => {
    const [code] = newRecoveryCodes() as [string]
    const stored = hashRecoveryCode(key, owner, code)
    expect(stored).toMatch(/^[0-9a-f]{64}$/)
    expect(stored).not.toContain(normaliseRecoveryCode(code))
    for (const typed of [code.toUpperCase(), code.replace('-', ''), code.replace('-', ' '), ` ${code} `]) {
      expect(hashRecoveryCode(key, owner, typed)).toBe(stored)
    }
    expect(hashRecoveryCode(key, owner, newRecoveryCodes()[0]!)).not.toBe(stored)
  })

  it('hash to something else for another user, another tenant or another key', () => {
    const [code] = newRecoveryCodes() as [string]
    const stored = hashRecoveryCode(key, owner, code)
    const others = [
      { tenantId: 7, userId: 43 },
      { tenantId: 8, userId: 42 },
      { tenantId: 74, userId: 2 },
    ]
    for (const other of others) expect(hashRecoveryCode(key, other, code)).not.toBe(stored)
    expect(hashRecoveryCode(createSecretKey(randomBytes(32)), owner, code)).not.toBe(stored)
  })
})
