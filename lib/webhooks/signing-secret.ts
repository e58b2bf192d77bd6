import { createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto'
import { seal, unseal } from '../crypto/seal.js'

/** HKDF's `info` for the key that seals signing secrets: derived from the code key, never the same key twice over. */
const SEALING_KEY_INFO = 'svc webhook secrets'
const PREFIX = 'whsec_'
// Standard Webhooks asks for 24 to 64 bytes; 32 is the width of the HMAC-SHA256 key.
const SECRET_BYTES = 32

/** A new signing secret as Standard Webhooks writes it: `whsec_` + base64 of random bytes. */
export function newSigningSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64')
}

/** The HMAC key a `whsec_` secret stands for: the bytes after the prefix. */
export function signingKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.slice(PREFIX.length), 'base64')
}

/** The key that seals every tenant's signing secret, derived from the code key (lib/otp/code-key.ts) at start. */
export function secretSealingKey(codeKey: KeyObject): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', codeKey, Buffer.alloc(0), SEALING_KEY_INFO, 32)))
}

const context = (tenantId: number) => `webhook:${tenantId}`

export function sealSigningSecret(key: KeyObject, tenantId: number, secret: string): string {
  return seal(key, context(tenantId), secret)
}

/** The tenant's secret, or null when the stored value was sealed for another tenant or key, or altered. */
export function unsealSigningSecret(key: KeyObject, tenantId: number, stored: string): string | null {
  return unseal(key, context(tenantId), stored)
}
