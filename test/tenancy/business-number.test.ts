import { randomInt } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { checkDigit, normalizeBusinessNumber } from '../../lib/tenancy/business-number.js'

// Published numbers of listed companies (Samsung Electronics, NAVER, Kakao). Samsung's ninth digit is 9, so its
// check digit also proves the floor(9 * 5 / 10) = 4 term: without it the check digit would be 2.
const PUBLISHED = ['124-81-00998', '220-81-62517', '120-81-47521']

describe('normalizeBusinessNumber', () => {
  it.each(PUBLISHED)('accepts the published number %s', (number) => {
    expect(normalizeBusinessNumber(number)).toBe(number.replaceAll('-', ''))
  })

  it.each([
    ['digits only', '1248100998'],
    ['hyphens', '124-81-00998'],
    ['spaces', '124 81 00998'],
    ['surrounding space', '  124-81-00998 '],
    ['irregular hyphens', '12-48-100-998'],
  ])('strips %s to the 10 digits', (_case, input) => {
    expect(normalizeBusinessNumber(input)).toBe('1248100998')
  })

  it('refuses every other check digit', () => {
    for (let digit = 0; digit <= 9; digit++) {
      if (digit === 8) continue
      expect(normalizeBusinessNumber(`124810099${digit}`)).toBeNull()
    }
  })

  it('refuses the check digit a calculation without the ninth-digit carry would give', () => {
    expect(normalizeBusinessNumber('124-81-00992')).toBeNull()
  })

  it.each([
    ['empty', ''],
    ['9 digits', '124-81-0099'],
    ['11 digits', '124-81-009980'],
    ['letters', '124-81-0099a'],
    ['dots as separators', '124.81.00998'],
    ['full-width digits', '１２４８１００９９８'],
    ['a sign', '+1248100998'],
  ])('refuses %s', (_case, input) => {
    expect(normalizeBusinessNumber(input)).toBeNull()
  })

  it('accepts exactly one check digit for any nine leading digits', () => {
    for (let sample = 0; sample < 200; sample++) {
      const prefix = String(randomInt(1_000_000_000)).padStart(9, '0')
      const accepted = Array.from({ length: 10 }, (_, digit) => `${prefix}${digit}`).filter(
        (candidate) => normalizeBusinessNumber(candidate) !== null,
      )
      expect(accepted).toEqual([`${prefix}${checkDigit(prefix)}`])
    }
  })
})

describe('checkDigit', () => {
  it('matches a hand calculation', () => {
    // 1*1 + 0*3 + 1*7 + 8*1 + 1*3 + 2*7 + 3*1 + 4*3 + 6*5 = 78, plus floor(6 * 5 / 10) = 3, gives 81 -> (10 - 1) % 10
    expect(checkDigit('101812346')).toBe(9)
  })

  it('wraps a sum ending in 0 to the check digit 0', () => {
    // 2*1 + 1*3 + 5*7 = 40 and every other digit is 0 -> (10 - 0) % 10
    expect(checkDigit('215000000')).toBe(0)
    expect(normalizeBusinessNumber('215-00-00000')).toBe('2150000000')
  })
})
