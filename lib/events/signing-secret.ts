import { randomBytes } from 'node:crypto'
import { derivedRing, type KeyRing } from '../crypto/key-ring.js'
import { seal, unseal } from '../crypto/seal.js'

/** HKDF's `info` for the keys that seal signing secrets: derived from the data keys, never the same key twice over. */
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

/** The keys that seal every tenant's signing secret: one derived from each data key (lib/data-keys). */
export function secretSealingKeys(dataKeys: KeyRing): KeyRing {
  return derivedRing(dataKeys, SEALING_KEY_INFO)
}

const context = (tenantId: number) => `webhook:${tenantId}`

export function sealSigningSecret(keys: KeyRing, tenantId: number, secret: string): string {
  return seal(keys, context(tenantId), secret)
}

/** The tenant's secret, or null when it was sealed for another tenant, by a key the ring lacks, or altered. */
export function unsealSigningSecret(keys: KeyRing, tenantId: number, stored: string): string | null {
  return unseal(keys, context(tenantId), stored)
}
