import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto'
import { keyOfKid, legacyKey, sealsWithoutKid, type KeyRing } from './key-ring.js'

// `v2.<kid>.<body>` names the key that sealed it; `v1.<body>` was sealed before key ids, by the ring's legacy key.
const WITH_KID = 'v2'
const WITHOUT_KID = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * A secret the service must read back (a TOTP seed, a webhook signing secret) as the database keeps it: AES-256-GCM
 * under the ring's first key, with `context` (whose secret it is) as additional data, base64url(iv | ciphertext |
 * tag) after the key's kid. A hash cannot serve where the secret itself is needed; without the key a stolen row tells
 * nothing, and a sealed value copied to another owner's row opens nothing.
 */
export function seal(ring: KeyRing, context: string, secret: string): string {
  const { kid, key } = ring.keys[0]
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const body = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url')
  return sealsWithoutKid(ring) ? `${WITHOUT_KID}.${body}` : `${WITH_KID}.${kid}.${body}`
}

/**
 * The secret `seal` sealed under `context` with any key of the ring, or null when the ring lacks its key, or it was
 * sealed for another context or altered.
 */
export function unseal(ring: KeyRing, context: string, stored: string): string | null {
  const parsed = parse(stored)
  if (parsed === null) return null
  const key = parsed.kid === null ? legacyKey(ring) : keyOfKid(ring, parsed.kid)
  return key === undefined ? null : open(key, context, parsed.body)
}

/** The kid a stored value names: null when it was sealed before key ids, undefined when it is no sealed value. */
export function sealedKid(stored: string): string | null | undefined {
  const parsed = parse(stored)
  return parsed === null ? undefined : parsed.kid
}

/** How every value the ring's first key seals begins: what the reseal looks past (lib/data-keys/reseal.ts). */
export function firstKeyPrefix(ring: KeyRing): string {
  return sealsWithoutKid(ring) ? `${WITHOUT_KID}.` : `${WITH_KID}.${ring.keys[0].kid}.`
}

function parse(stored: string): { kid: string | null; body: string } | null {
  const parts = stored.split('.')
  if (parts[0] === WITHOUT_KID && parts.length === 2) return { kid: null, body: parts[1]! }
  if (parts[0] === WITH_KID && parts.length === 3 && parts[1] !== '') return { kid: parts[1]!, body: parts[2]! }
  return null
}

function open(key: KeyObject, context: string, body: string): string | null {
  const sealed = Buffer.from(body, 'base64url')
  if (sealed.length < IV_BYTES + TAG_BYTES) return null
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES))
  decipher.setAAD(Buffer.from(context, 'utf8'))
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES))
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8')
  } catch {
    return null
  }
}
