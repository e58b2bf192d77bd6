import { createSecretKey, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { codeMatches, generateCode, hashCode, phoneKeyOf, type CodeBinding } from '../../../lib/account-security/codes/codes.js'
import { codeSmsText } from '../../../lib/account-security/codes/sms-text.js'
import { isEucKrText, SMS_MAX_BYTES, smsByteLength } from '../../../lib/sms/sizing.js'

const key = createSecretKey(randomBytes(32))
const binding: CodeBinding = { tenantId: 7, userId: 42, purpose: 'PASSWORD_RESET', phone: '01022223333' }

describe('one-time codes', () => {
  it('are six digits, zero-padded, drawn over the whole million', () => {
    const codes = Array.from({ length: 20_000 }, generateCode)
    expect(codes.filter((code) => !/^[0-9]{6}$/.test(code))).toEqual([])
    // One code in ten starts with 0; without the padding none of these would be six characters.
    expect(codes.some((code) => code.startsWith('0'))).toBe(true)
    expect(codes.some((code) => code >= '900000')).toBe(true)
    // 20,000 draws from a million repeat a value about 200 times (n²/2N, standard deviation about 14); from a
    // hundred thousand values about 1,800 times. 300 is seven deviations from the first: it never fails by chance.
    expect(codes.length - new Set(codes).size).toBeLessThan(300)
  })

  it('are kept as a keyed hash that names neither the code nor its binding', () => {
    const stored = hashCode(key, binding, '042917')
    expect(stored).toMatch(/^[0-9a-f]{64}$/)
    expect(stored).not.toContain('042917')
    expect(codeMatches(key, binding, '042917', stored)).toBe(true)
    expect(codeMatches(key, binding, '042918', stored)).toBe(false)
    expect(codeMatches(createSecretKey(randomBytes(32)), binding, '042917', stored)).toBe(false)
    expect(codeMatches(key, binding, '042917', 'not-a-hash')).toBe(false)
  })

  it('verify for nothing but their tenant, user, purpose and phone', () => {
    const stored = hashCode(key, binding, '042917')
    const others: CodeBinding[] = [
      { ...binding, tenantId: 8 },
      { ...binding, userId: 43 },
      { ...binding, purpose: 'PHONE_VERIFICATION' },
      { ...binding, purpose: 'MFA_SMS' },
      { ...binding, phone: '01022223334' },
      // Parts that could run together if they were only concatenated.
      { ...binding, tenantId: 74, userId: 2 },
    ]
    for (const other of others) expect({ other, matches: codeMatches(key, other, '042917', stored) }).toEqual({ other, matches: false })
  })

  it('count a phone number under a key that names no number, the same for every tenant', () => {
    const counted = phoneKeyOf(key, binding.phone)
    expect(counted).toMatch(/^[0-9a-f]{64}$/)
    expect(counted).not.toContain(binding.phone)
    expect(phoneKeyOf(key, binding.phone)).toBe(counted)
    expect(phoneKeyOf(key, '01022223334')).not.toBe(counted)
    expect(phoneKeyOf(createSecretKey(randomBytes(32)), binding.phone)).not.toBe(counted)
    // Not the code hash's domain: the counter's key is no code hash of any binding.
    expect(counted).not.toBe(hashCode(key, binding, ''))
  })

  it('go out in a Korean text naming the academy and the purpose that fits one SMS', () => {
    const text = codeSmsText('한빛수학학원', 'PASSWORD_RESET', '042917', 300)
    expect(text).toBe('[한빛수학학원] 비밀번호 재설정 인증번호 042917 (5분 안에 입력)')
    expect(isEucKrText(text)).toBe(true)
    expect(smsByteLength(text)).toBeLessThanOrEqual(SMS_MAX_BYTES)
    expect(codeSmsText('A', 'PHONE_VERIFICATION', '000001', 90)).toBe('[A] 휴대폰 인증번호 000001 (1분 안에 입력)')
  })
})
