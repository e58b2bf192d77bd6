import { createHmac, randomInt, type KeyObject } from 'node:crypto'

/** How many recovery codes a set has. */
export const RECOVERY_CODE_COUNT = 10
// Lowercase letters and digits without 0, 1, l and o, which are misread when copied from paper: 32 symbols, so ten
// of them are 50 bits, far beyond guessing within the login lockout.
const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789'
const HALF = 5

/** A new set: ten codes like `k7m2p-x9qrt`, each from the CSPRNG. */
export function newRecoveryCodes(): string[] {
  const half = () => Array.from({ length: HALF }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => `${half()}-${half()}`)
}

/** A presented code as typed: case, spaces and dashes do not matter. */
export function normaliseRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '')
}

/**
 * What the database keeps of a recovery code: HMAC-SHA256 under the set's key (lib/account-security/second-factor/recovery-key.ts), bound to
 * tenant and user, hex. A keyed hash rather than bcrypt: the codes carry 50 random bits, so no dictionary reaches them, and checking
 * one costs microseconds instead of a bcrypt comparison at every sign-in with a code.
 */
export function hashRecoveryCode(key: KeyObject, owner: { tenantId: number; userId: number }, code: string): string {
  return createHmac('sha256', key).update(`recovery:${owner.tenantId}:${owner.userId}:${normaliseRecoveryCode(code)}`).digest('hex')
}
