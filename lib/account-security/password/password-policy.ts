import { AppError } from '../../errors.js'
import { COMMON_PASSWORDS } from './common-passwords.js'

/** docs/api.md#passwords. Length counts code points, so a Hangul syllable is one character. */
export const PASSWORD_MIN_CHARACTERS = 8
/** bcrypt ignores every byte after the 72nd; a longer password would silently share a hash with its prefix. */
export const PASSWORD_MAX_BYTES = 72

const LETTER = /\p{L}/u
const DIGIT = /\p{Nd}/u
const COMMON = new Set(COMMON_PASSWORDS)

export function isCommonPassword(password: string): boolean {
  return COMMON.has(password.toLowerCase())
}

/** Throws AUTH_012 naming the first rule the password breaks; returns when it satisfies them all. */
export function checkPasswordPolicy(password: string, loginId: string): void {
  const violation = passwordPolicyViolation(password, loginId)
  if (violation !== null) throw new AppError('AUTH_012', violation)
}

/** The first rule the password breaks, worded for the problem detail, or null when it satisfies them all. */
export function passwordPolicyViolation(password: string, loginId: string): string | null {
  if ([...password].length < PASSWORD_MIN_CHARACTERS) {
    return `Password must be at least ${PASSWORD_MIN_CHARACTERS} characters long.`
  }
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
    return `Password must be at most ${PASSWORD_MAX_BYTES} bytes in UTF-8 (a Hangul syllable takes 3).`
  }
  if (!LETTER.test(password)) return 'Password must contain at least one letter.'
  if (!DIGIT.test(password)) return 'Password must contain at least one digit.'
  if (loginId !== '' && password.toLowerCase().includes(loginId.toLowerCase())) {
    return 'Password must not contain the login id.'
  }
  if (isCommonPassword(password)) return 'Password is one of the most common passwords.'
  return null
}
