import { randomInt } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { checkPasswordPolicy } from '../../lib/account-security/password/password-policy.js'
import {
  generateAvatarSeed,
  generateCustomId,
  generateLoginId,
  generateTemporaryPassword,
  generateTenantSlug,
} from '../../lib/tenancy/identifiers.js'

const SLUG = /^[a-z0-9][a-z0-9-]*$/
const SUFFIX = '-[a-z0-9]{6}$'

function times<T>(count: number, make: () => T): T[] {
  return Array.from({ length: count }, make)
}

describe('generateTenantSlug', () => {
  it.each([
    ['Bright Math Academy', '^bright-math-academy'],
    ['  Bright   Math -- Academy!! ', '^bright-math-academy'],
    ['해피수학학원', '^academy'],
    ['해피 Math 학원 2', '^math-2'],
    ['Café Étude', '^cafe-etude'],
    ['!!! ???', '^academy'],
    ['', '^academy'],
    ['42nd Street Tutors', '^42nd-street-tutors'],
  ])('turns %j into a slug matching %s plus a random suffix', (name, start) => {
    expect(generateTenantSlug(name)).toMatch(new RegExp(start + SUFFIX))
  })

  it('cuts a long name so the slug stays within 63 characters', () => {
    const slug = generateTenantSlug('A'.repeat(100))
    expect(slug).toHaveLength(63)
    expect(slug).toMatch(new RegExp(`^a{56}${SUFFIX}`))
  })

  it('leaves no doubled or trailing hyphen where the cut falls on a separator', () => {
    const slug = generateTenantSlug(`${'a'.repeat(55)} ${'b'.repeat(20)}`)
    expect(slug).toMatch(new RegExp(`^a{55}${SUFFIX}`))
  })

  it('produces valid slugs of at most 63 characters for arbitrary names', () => {
    const alphabet = 'aZ9 -_.!가나é\u{1F600}\t'
    for (let i = 0; i < 200; i++) {
      const chars = [...alphabet]
      const name = times(randomInt(0, 120), () => chars[randomInt(chars.length)]).join('')
      const slug = generateTenantSlug(name)
      expect(slug).toMatch(SLUG)
      expect(slug).not.toMatch(/--|-$/)
      expect(slug.length).toBeLessThanOrEqual(63)
    }
  })

  it('gives the same name a different slug each time', () => {
    expect(new Set(times(50, () => generateTenantSlug('Bright Math Academy'))).size).toBe(50)
  })
})

describe('generateCustomId', () => {
  it('is 8 uppercase characters without look-alikes', () => {
    for (const id of times(500, generateCustomId)) {
      expect(id).toMatch(/^[A-Z2-9]{8}$/)
      expect(id).not.toMatch(/[01OIL]/)
    }
  })

  it('varies', () => {
    expect(new Set(times(100, generateCustomId)).size).toBe(100)
  })
})

describe('generateAvatarSeed', () => {
  it('is 16 characters of [A-Za-z0-9_-]', () => {
    for (const seed of times(200, generateAvatarSeed)) expect(seed).toMatch(/^[A-Za-z0-9_-]{16}$/)
  })

  it('varies', () => {
    expect(new Set(times(100, generateAvatarSeed)).size).toBe(100)
  })
})

describe('generateLoginId', () => {
  it('appends 8 lowercase letters and digits to the prefix', () => {
    expect(generateLoginId('staff-')).toMatch(/^staff-[a-z0-9]{8}$/)
    expect(generateLoginId('')).toMatch(/^[a-z0-9]{8}$/)
  })

  it('varies', () => {
    expect(new Set(times(100, () => generateLoginId('staff-'))).size).toBe(100)
  })
})

describe('generateTemporaryPassword', () => {
  it('always satisfies the password policy', () => {
    for (let i = 0; i < 200; i++) {
      const loginId = generateLoginId('staff-')
      const password = generateTemporaryPassword(loginId)
      expect(password).toHaveLength(16)
      expect(password).toMatch(/[A-Za-z]/)
      expect(password).toMatch(/[0-9]/)
      expect(() => checkPasswordPolicy(password, loginId)).not.toThrow()
    }
  })

  it('avoids even a short login id', () => {
    for (const password of times(200, () => generateTemporaryPassword('ab'))) {
      expect(password.toLowerCase()).not.toContain('ab')
      expect(() => checkPasswordPolicy(password, 'ab')).not.toThrow()
    }
  })

  it('uses no look-alike characters, since people type it from a printout', () => {
    for (const password of times(200, () => generateTemporaryPassword())) expect(password).not.toMatch(/[01OoIlL]/)
  })

  it('varies', () => {
    expect(new Set(times(100, () => generateTemporaryPassword())).size).toBe(100)
  })
})
