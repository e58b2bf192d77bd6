import { createHmac, randomInt, timingSafeEqual, type KeyObject } from 'node:crypto'
import type { OneTimeCodePurpose } from '../../../db/schema.js'

/** Six decimal digits. */
export const CODE_PATTERN = '^[0-9]{6}$'

/** A new code: six digits from the CSPRNG, zero-padded (000000 to 999999 equally likely). */
export function generateCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0')
}

/** Whom and what a code is for. Every part goes into its hash, so a code verifies for nothing else. */
export interface CodeBinding {
  tenantId: number
  userId: number
  purpose: OneTimeCodePurpose
  /** The number the code was sent to, national digits. */
  phone: string
}

function digest(key: KeyObject, binding: CodeBinding, code: string): Buffer {
  const { tenantId, userId, purpose, phone } = binding
  return createHmac('sha256', key).update(`${tenantId}:${userId}:${purpose}:${phone}:${code}`).digest()
}

/**
 * What the database keeps of a code: HMAC-SHA256 under `key` (the first data key when issued), hex. Six digits are a
 * million values, so a plain hash of them would be reversed by trying them all; without the key a stolen row tells
 * nothing.
 */
export function hashCode(key: KeyObject, binding: CodeBinding, code: string): string {
  return digest(key, binding, code).toString('hex')
}

/** Whether `code` is the one `stored` was made from for `binding`, compared in constant time. */
export function codeMatches(key: KeyObject, binding: CodeBinding, code: string, stored: string): boolean {
  const expected = Buffer.from(stored, 'hex')
  const presented = digest(key, binding, code)
  return expected.length === presented.length && timingSafeEqual(expected, presented)
}

/**
 * The per-number counter's key (one_time_code_phone_days): an HMAC of the digits under the first data key, in a
 * domain of its own, so the table that counts across tenants names no number and cannot be read back into one.
 */
export function phoneKeyOf(key: KeyObject, phone: string): string {
  return createHmac('sha256', key).update(`phone:${phone}`).digest('hex')
}
