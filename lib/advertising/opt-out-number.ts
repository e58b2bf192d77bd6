import { phoneInput } from '../sms/phone.js'

/**
 * An advertisement promises a free refusal (`무료거부`), so the number it prints must be a free 080 number: `080` and
 * 7 or 8 more digits (docs/api.md#advertising). A mobile, a 02 line, a 070 or a 1588 number would make the guardian
 * pay to refuse. Written as other phone inputs are (hyphens, spaces, dots, parentheses, `+82`); libphonenumber is not
 * asked, since its metadata knows only the 10-digit 080 numbers.
 */

const FREE_NUMBER = /^080\d{7,8}$/

/** Whether stored digits are a free 080 number. */
export function isFreeOptOutNumber(digits: string): boolean {
  return FREE_NUMBER.test(digits)
}

/** The digits of a free 080 number as written (`080-123-4567`, `+82 80 1234 5678`), or null for anything else. */
export function normalizeOptOutNumber(input: string): string | null {
  const written = phoneInput(input)
  if (written === null) return null
  const digits = written.replace(/\D/g, '')
  const national = written.startsWith('+') ? (digits.startsWith('82') ? `0${digits.slice(2)}` : null) : digits
  return national !== null && isFreeOptOutNumber(national) ? national : null
}
