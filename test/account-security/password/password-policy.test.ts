import { describe, expect, it } from 'vitest'
import { COMMON_PASSWORDS } from '../../../lib/account-security/password/common-passwords.js'
import { checkPasswordPolicy, isCommonPassword } from '../../../lib/account-security/password/password-policy.js'
import { AppError } from '../../../lib/errors.js'

/** The AUTH_012 detail the policy answers with, or undefined when the password is accepted. */
function refusal(password: string, loginId = 'someone'): string | undefined {
  try {
    checkPasswordPolicy(password, loginId)
    return undefined
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    expect(error.code).toBe('AUTH_012')
    expect(error.status).toBe(400)
    return error.detail
  }
}

const HANGUL = '가'
const SMILE = '\u{1F600}'

describe('checkPasswordPolicy', () => {
  it('accepts a password that satisfies every rule', () => {
    expect(refusal('Tr0ub4dor&3x')).toBeUndefined()
  })

  describe('length', () => {
    it('accepts exactly 8 characters', () => {
      expect(refusal('zebra417')).toBeUndefined()
    })

    it('refuses 7 characters, naming the minimum', () => {
      expect(refusal('zebra41')).toMatch(/at least 8 characters/)
    })

    it('counts code points, so 8 Hangul-and-digit characters are enough', () => {
      expect(refusal(`${HANGUL.repeat(4)}4172`)).toBeUndefined()
      expect(refusal(`${HANGUL.repeat(3)}4172`)).toMatch(/at least 8 characters/)
    })

    it('counts an emoji as one character even though it is two UTF-16 units', () => {
      expect(`${SMILE.repeat(6)}a`.length).toBe(13)
      expect(refusal(`${SMILE.repeat(5)}a1`)).toMatch(/at least 8 characters/)
      expect(refusal(`${SMILE.repeat(6)}a1`)).toBeUndefined()
    })

    it('accepts 72 UTF-8 bytes and refuses 73', () => {
      expect(refusal(`z1${'x'.repeat(70)}`)).toBeUndefined()
      expect(refusal(`z1${'x'.repeat(71)}`)).toMatch(/at most 72 bytes/)
    })

    it('counts a Hangul syllable as 3 bytes against the 72-byte limit', () => {
      const fits = `${HANGUL.repeat(23)}417`
      expect(Buffer.byteLength(fits)).toBe(72)
      expect(refusal(fits)).toBeUndefined()

      const tooLong = `${HANGUL.repeat(24)}4`
      expect([...tooLong].length).toBe(25)
      expect(Buffer.byteLength(tooLong)).toBe(73)
      expect(refusal(tooLong)).toMatch(/at most 72 bytes/)
    })
  })

  describe('character classes', () => {
    it.each([
      ['a letter', ['40172953', '4017-2953!'], /at least one letter/],
      ['a digit', ['zebra-crossing', '학원비밀번호입니다'], /at least one digit/],
    ])('refuses a password without %s', (_class, passwords, detail) => {
      for (const password of passwords) expect(refusal(password)).toMatch(detail)
    })

    it('counts Hangul and other scripts as letters', () => {
      expect(refusal('학원비밀번호2024')).toBeUndefined()
      expect(refusal('Ωμέγα-2718')).toBeUndefined()
    })

    it('counts any Unicode decimal digit', () => {
      expect(refusal('zebracrossing\u0663')).toBeUndefined()
      expect(refusal('zebracrossing\uFF17')).toBeUndefined()
    })
  })

  describe('login id', () => {
    it('refuses a password containing the login id', () => {
      expect(refusal('my-teacher42-rocks', 'teacher42')).toMatch(/login id/)
    })

    it('compares the login id case-insensitively', () => {
      expect(refusal('xxTEACHER42yy', 'teacher42')).toMatch(/login id/)
      expect(refusal('xxteacher42yy', 'Teacher42')).toMatch(/login id/)
    })

    it('refuses a password equal to the login id', () => {
      expect(refusal('kim2024seoul', 'KIM2024SEOUL')).toMatch(/login id/)
    })

    it('accepts a password that only shares part of the login id', () => {
      expect(refusal('teacher-zebra-4', 'teacher42')).toBeUndefined()
    })

    it('skips the rule for an empty login id', () => {
      expect(refusal('Tr0ub4dor&3x', '')).toBeUndefined()
    })
  })

  describe('common passwords', () => {
    it.each(['password1', 'qwerty123', 'iloveyou1', '1q2w3e4r', 'abc12345', 'trustno1'])('refuses %s', (password) => {
      expect(refusal(password)).toMatch(/most common passwords/)
    })

    it('compares case-insensitively', () => {
      expect(refusal('PassWord1')).toMatch(/most common passwords/)
      expect(refusal('QWERTY123')).toMatch(/most common passwords/)
    })

    it('accepts a password that merely contains a common one', () => {
      expect(refusal('password1-zebra')).toBeUndefined()
    })
  })

  it('names a different rule in each refusal', () => {
    const details = [
      refusal('zebra41'),
      refusal(`z1${'x'.repeat(71)}`),
      refusal('40172953'),
      refusal('zebra-crossing'),
      refusal('xxteacher42yy', 'teacher42'),
      refusal('password1'),
    ]
    expect(details.every((detail) => typeof detail === 'string')).toBe(true)
    expect(new Set(details).size).toBe(details.length)
  })
})

describe('isCommonPassword', () => {
  it('recognises list entries in any case', () => {
    expect(isCommonPassword('123456')).toBe(true)
    expect(isCommonPassword('Dragon')).toBe(true)
    expect(isCommonPassword('Tr0ub4dor&3x')).toBe(false)
  })
})

describe('the common password list', () => {
  it('has exactly 1,000 unique entries', () => {
    expect(COMMON_PASSWORDS).toHaveLength(1000)
    expect(new Set(COMMON_PASSWORDS).size).toBe(1000)
  })

  it('holds only non-empty lowercase entries without surrounding space', () => {
    for (const entry of COMMON_PASSWORDS) {
      expect(entry).not.toBe('')
      expect(entry).toBe(entry.toLowerCase())
      expect(entry).toBe(entry.trim())
    }
  })

  it('starts with the best-known entries', () => {
    expect(COMMON_PASSWORDS.slice(0, 4)).toEqual(['123456', 'password', '12345678', 'qwerty'])
  })

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(COMMON_PASSWORDS)).toBe(true)
  })
})
