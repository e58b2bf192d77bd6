import { randomBytes, randomInt } from 'node:crypto'
import { passwordPolicyViolation } from '../account-security/password/password-policy.js'

/** Generated identifiers for tenants and users; every random character comes from node:crypto. */

const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789'
// Read aloud and typed by people: no 0/O, 1/I/L look-alikes.
const CUSTOM_ID_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789'
const TEMPORARY_PASSWORD_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz23456789'

// A DNS label holds 63 characters, so a slug can also serve as a subdomain.
const SLUG_MAX_LENGTH = 63
const SLUG_SUFFIX_LENGTH = 6
const SLUG_FALLBACK = 'academy'

/**
 * `Bright Math Academy` -> `bright-math-academy-x7k2qp`. Built from the name's ASCII letters and digits (accents
 * dropped); a name with none, such as an all-Hangul one, becomes `academy-...`. The random suffix makes collisions
 * negligible, so registration needs no retry loop for them.
 */
export function generateTenantSlug(instituteName: string): string {
  const base =
    instituteName
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, SLUG_MAX_LENGTH - SLUG_SUFFIX_LENGTH - 1)
      .replace(/^-+|-+$/g, '') || SLUG_FALLBACK
  return `${base}-${randomString(LOWER_ALNUM, SLUG_SUFFIX_LENGTH)}`
}

/** The tenant's short portal code, e.g. `K7MX2QHD`. */
export function generateCustomId(): string {
  return randomString(CUSTOM_ID_ALPHABET, 8)
}

/** 16 characters of `[A-Za-z0-9_-]`: 12 random bytes in base64url. */
export function generateAvatarSeed(): string {
  return randomBytes(12).toString('base64url')
}

/** `generateLoginId('staff-')` -> `staff-q3v8m0za`, for users created in-process rather than by sign-up. */
export function generateLoginId(prefix: string): string {
  return `${prefix}${randomString(LOWER_ALNUM, 8)}`
}

/**
 * 16 characters (about 92 bits) that satisfy the password policy, including the rule against containing
 * `loginId`. Candidates that miss a letter, a digit or another rule are drawn again rather than patched, so every
 * character stays uniformly random.
 */
export function generateTemporaryPassword(loginId = ''): string {
  for (;;) {
    const candidate = randomString(TEMPORARY_PASSWORD_ALPHABET, 16)
    if (passwordPolicyViolation(candidate, loginId) === null) return candidate
  }
}

/**
 * Characters a login id or a name may never hold: control (Cc), format (Cf: zero-width, bidi
 * overrides and isolates, soft hyphen), unassigned (Cn) and lone surrogates (Cs). The same class serves the
 * request schemas (as a pattern) and the in-process contract.
 */
export const UNSAFE_TEXT_CLASS = '\\p{Cc}\\p{Cf}\\p{Cn}\\p{Cs}'
const UNSAFE_TEXT = new RegExp(`[${UNSAFE_TEXT_CLASS}]`, 'u')

export function hasUnsafeCharacters(text: string): boolean {
  return UNSAFE_TEXT.test(text)
}

function randomString(alphabet: string, length: number): string {
  let result = ''
  for (let i = 0; i < length; i++) result += alphabet[randomInt(alphabet.length)]
  return result
}
