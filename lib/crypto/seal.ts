import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * A secret the service must read back (a TOTP seed, a webhook signing secret) as the database keeps it: AES-256-GCM
 * under a key of the service, with `context` (whose secret it is) as additional data, `v1.` + base64url(iv |
 * ciphertext | tag). A hash cannot serve where the secret itself is needed; without the key a stolen row tells
 * nothing, and a sealed value copied to another owner's row opens nothing.
 */
export function seal(key: KeyObject, context: string, secret: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const sealed = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${VERSION}.${sealed.toString('base64url')}`
}

/** The secret `seal` sealed under `context`, or null when it was sealed for another context or key, or altered. */
export function unseal(key: KeyObject, context: string, stored: string): string | null {
  const [version, body] = stored.split('.', 2)
  if (version !== VERSION || body === undefined) return null
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
