import { Secret, TOTP } from 'otpauth'

// RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30-second steps. The otpauth library computes the
// codes and builds the URI; a code is accepted one step either side of now, for a phone clock a little off.
const PERIOD = 30
const DIGITS = 6
const ALGORITHM = 'SHA1'
const DRIFT_STEPS = 1
/** 160 bits, the size RFC 4226 recommends for an HMAC-SHA-1 key. */
const SECRET_BYTES = 20

/** A new TOTP secret from the CSPRNG, in base32 as apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32
}

const totpOf = (secret: string, issuer = '', label = '') =>
  new TOTP({ issuer, label, algorithm: ALGORITHM, digits: DIGITS, period: PERIOD, secret: Secret.fromBase32(secret) })

/** The `otpauth://totp/...` URI an authenticator app reads (as a QR code or pasted): the academy as issuer. */
export function totpUri(secret: string, issuer: string, account: string): string {
  return totpOf(secret, issuer, account).toString()
}

/** The code of `secret` at `at` (tests and benchmarks stand in for the authenticator app with it). */
export function totpCode(secret: string, at: number = Date.now()): string {
  return totpOf(secret).generate({ timestamp: at })
}

/**
 * The time step whose code `code` is, within the allowed drift of `at`, or null when it is none of them. The caller
 * accepts a step once (lib/account-security/second-factor/factors.ts): a code overheard or replayed within its 90 seconds opens nothing more.
 */
export function matchingStep(secret: string, code: string, at: number = Date.now()): number | null {
  const delta = totpOf(secret).validate({ token: code, timestamp: at, window: DRIFT_STEPS })
  return delta === null ? null : TOTP.counter({ period: PERIOD, timestamp: at }) + delta
}
