import { parsePhoneNumberFromString } from 'libphonenumber-js/max'

/**
 * Phone numbers in the service's one stored form: Korean national digits (`01012345678`, `0212345678`,
 * `15881234`). The `max` metadata is used because the smaller sets accept unassigned ranges (`02-0000-0000`).
 */

/**
 * Digits and the separators people type; anything else (letters, `ext`, full-width digits) makes the input invalid
 * rather than being silently dropped by the parser. Also what a log line takes for a number (lib/http/log-url.ts).
 */
export const PHONE_WRITING = /^\+?[0-9\s().-]+$/
const MAX_INPUT_LENGTH = 32

// 15xx/16xx/18xx representative numbers: the provider accepts them as senders, and libphonenumber's
// metadata does not list every assigned prefix.
const REPRESENTATIVE_NUMBER = /^1[568]\d{6}$/

const MIN_SENDER_DIGITS = 8
const MAX_SENDER_DIGITS = 11

/** Input written as a phone number (trimmed, at most 32 characters): its text, or null. */
export function phoneInput(input: string): string | null {
  const trimmed = input.trim()
  return trimmed.length === 0 || trimmed.length > MAX_INPUT_LENGTH || !PHONE_WRITING.test(trimmed) ? null : trimmed
}

export function normalizePhone(input: string): string | null {
  const trimmed = phoneInput(input)
  if (trimmed === null) return null
  const digits = trimmed.replace(/\D/g, '')
  if (REPRESENTATIVE_NUMBER.test(digits) && !trimmed.startsWith('+')) return digits
  // Without `+` a number must be written nationally (trunk prefix 0): the parser would otherwise read
  // `1234567890` as `012-3456-7890` and `8210...` as a country code.
  if (!trimmed.startsWith('+') && !digits.startsWith('0')) return null
  const parsed = parsePhoneNumberFromString(trimmed, 'KR')
  if (!parsed || parsed.country !== 'KR' || !parsed.isValid()) return null
  return parsed.format('NATIONAL').replace(/\D/g, '')
}

/** A number the provider accepts as a sender: a valid Korean number of 8 to 11 national digits. */
export function isValidSenderNumber(input: string): boolean {
  const digits = normalizePhone(input)
  return digits !== null && digits.length >= MIN_SENDER_DIGITS && digits.length <= MAX_SENDER_DIGITS
}

/** `02-1234-5678`, `010-1234-5678`, `031-123-4567`, `1588-1234`; input that is not a number comes back as given. */
export function formatHyphenated(digits: string): string {
  if (REPRESENTATIVE_NUMBER.test(digits)) return `${digits.slice(0, 4)}-${digits.slice(4)}`
  const parsed = /^0\d+$/.test(digits) ? parsePhoneNumberFromString(digits, 'KR') : undefined
  if (parsed?.isValid()) return parsed.format('NATIONAL')
  return digits
}

/**
 * First 3 digits, `-****-`, last 4 (docs/api.md#phone-numbers), for every number. Fewer than 8 digits would show
 * almost all of it, so such a value is masked completely.
 */
export function maskPhone(digits: string): string {
  const clean = digits.replace(/\D/g, '')
  if (clean.length < 8) return '***-****-****'
  return `${clean.slice(0, 3)}-****-${clean.slice(-4)}`
}
