import { Secret, TOTP } from 'otpauth'
import { describe, expect, it } from 'vitest'
import { matchingStep, newTotpSecret, totpCode, totpUri } from '../../../lib/account-security/second-factor/totp.js'

// RFC 6238 appendix B: the SHA-1 seed is the ASCII "12345678901234567890", in base32 as an app takes it.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'
const seconds = (at: number) => at * 1000
const STEP = 30

describe('TOTP codes (lib/account-security/second-factor/totp.ts)', () => {
  it("compute RFC 6238's SHA-1 test vectors, six digits", () => {
    expect(Secret.fromBase32(RFC_SECRET).utf8).toBe('12345678901234567890')
    expect(totpCode(RFC_SECRET, seconds(59))).toBe('287082')
    expect(totpCode(RFC_SECRET, seconds(1111111109))).toBe('081804')
    expect(totpCode(RFC_SECRET, seconds(1111111111))).toBe('050471')
    expect(totpCode(RFC_SECRET, seconds(1234567890))).toBe('005924')
    expect(totpCode(RFC_SECRET, seconds(2000000000))).toBe('279037')
  })

  it("are the last six of the RFC's eight-digit codes (the same truncation, fewer digits)", () => {
    const eight = new TOTP({ algorithm: 'SHA1', digits: 8, period: STEP, secret: Secret.fromBase32(RFC_SECRET) })
    expect(eight.generate({ timestamp: seconds(59) })).toBe('94287082')
    expect(totpCode(RFC_SECRET, seconds(59))).toBe('94287082'.slice(2))
  })

  it('match the step of the code now, one step late and one step early', () => {
    const at = seconds(1111111109)
    const step = Math.floor(1111111109 / STEP)
    expect(matchingStep(RFC_SECRET, '081804', at)).toBe(step)
    // The phone's clock a step behind the server's, and a step ahead: the same step is answered, never the server's.
    expect(matchingStep(RFC_SECRET, '081804', at + seconds(STEP))).toBe(step)
    expect(matchingStep(RFC_SECRET, '081804', at - seconds(STEP))).toBe(step)
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, at - seconds(STEP)), at)).toBe(step - 1)
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, at + seconds(STEP)), at)).toBe(step + 1)
  })

  it('refuse a code two steps away either side', () => {
    const at = seconds(1111111109)
    expect(matchingStep(RFC_SECRET, '081804', at + seconds(2 * STEP))).toBeNull()
    expect(matchingStep(RFC_SECRET, '081804', at - seconds(2 * STEP))).toBeNull()
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, at + seconds(2 * STEP)), at)).toBeNull()
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, at - seconds(2 * STEP)), at)).toBeNull()
  })

  it("refuse another secret's code and anything that is not the code", () => {
    const at = seconds(59)
    const other = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'
    expect(matchingStep(other, '287082', at)).toBeNull()
    expect(matchingStep(RFC_SECRET, totpCode(other, at), at)).toBeNull()
    for (const wrong of ['287083', '87082', '2870820', '', 'abcdef', '94287082']) {
      expect({ wrong, step: matchingStep(RFC_SECRET, wrong, at) }).toEqual({ wrong, step: null })
    }
  })

  it('make new secrets of 160 random bits, in base32', () => {
    const secrets = Array.from({ length: 50 }, newTotpSecret)
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Z2-7]{32}$/)
      expect(Secret.fromBase32(secret).bytes).toHaveLength(20)
    }
    expect(new Set(secrets).size).toBe(secrets.length)
  })

  it('put issuer, account, secret, SHA1, 6 digits and 30 seconds in the otpauth URI', () => {
    const uri = new URL(totpUri(RFC_SECRET, 'Bright Math Academy', 'kim-student'))
    expect(uri.protocol).toBe('otpauth:')
    expect(uri.host).toBe('totp')
    expect(decodeURIComponent(uri.pathname)).toBe('/Bright Math Academy:kim-student')
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      issuer: 'Bright Math Academy',
      secret: RFC_SECRET,
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    })
  })
})
