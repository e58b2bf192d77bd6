import { describe, expect, it } from 'vitest'
import { formatHyphenated, isValidSenderNumber, maskPhone, normalizePhone } from '../../lib/sms/phone.js'

describe('normalizePhone', () => {
  it.each([
    ['010-1234-5678', '01012345678'],
    ['01012345678', '01012345678'],
    ['+82 10-1234-5678', '01012345678'],
    ['+821012345678', '01012345678'],
    ['010.1234.5678', '01012345678'],
    [' 010 1234 5678 ', '01012345678'],
    ['02 1234 5678', '0212345678'],
    ['(02) 1234-5678', '0212345678'],
    ['+82 2-1234-5678', '0212345678'],
    ['031-123-4567', '0311234567'],
    ['070-1234-5678', '07012345678'],
    ['1588-1234', '15881234'],
    ['15881234', '15881234'],
    ['1644 1234', '16441234'],
    ['+82 1588-1234', '15881234'],
  ])('reads %j as %s', (input, expected) => {
    expect(normalizePhone(input)).toBe(expected)
  })

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['garbage', 'hello'],
    ['letters among digits', '010-abcd-5678'],
    ['a letter O for zero', '01O12345678'],
    ['a trailing letter', '01012345678x'],
    ['an extension', '010-1234-5678 ext 9'],
    ['too short', '123'],
    ['too short with prefix', '02123'],
    ['too long', '010123456789'],
    ['a national number without its 0', '1012345678'],
    ['a country code without +', '821012345678'],
    ['a foreign number', '+1 202 555 0123'],
    ['an unassigned range', '02-0000-0000'],
    ['full-width digits', '０１０１２３４５６７８'],
    ['a huge string', '0'.repeat(10_000)],
  ])('rejects %s', (_case, input) => {
    expect(normalizePhone(input)).toBeNull()
  })
})

describe('isValidSenderNumber', () => {
  it.each(['0212345678', '02-1234-5678', '01012345678', '031-123-4567', '1588-1234', '16001234', '18001234'])(
    'accepts %s',
    (input) => {
      expect(isValidSenderNumber(input)).toBe(true)
    },
  )

  it.each(['123', 'abc', '050-7123-45678', '1234-5678', '+1 202 555 0123'])('rejects %s', (input) => {
    expect(isValidSenderNumber(input)).toBe(false)
  })
})

describe('formatHyphenated', () => {
  it.each([
    ['0212345678', '02-1234-5678'],
    ['021234567', '02-123-4567'],
    ['01012345678', '010-1234-5678'],
    ['0311234567', '031-123-4567'],
    ['03112345678', '031-1234-5678'],
    ['15881234', '1588-1234'],
    ['16001234', '1600-1234'],
  ])('formats %s as %s', (digits, expected) => {
    expect(formatHyphenated(digits)).toBe(expected)
  })

  it('returns a value that is not a number unchanged', () => {
    expect(formatHyphenated('12')).toBe('12')
  })
})

describe('maskPhone', () => {
  it.each([
    ['01012345678', '010-****-5678'],
    ['0212345678', '021-****-5678'],
    ['0311234567', '031-****-4567'],
    ['15881234', '158-****-1234'],
  ])('masks %s as %s', (digits, expected) => {
    expect(maskPhone(digits)).toBe(expected)
  })

  it('hides a value too short to mask partially', () => {
    expect(maskPhone('1234')).toBe('***-****-****')
  })
})
