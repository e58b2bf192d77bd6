import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/** Whose secret it is: the seal is bound to it, so a sealed secret copied to another user's row opens nothing. */
export interface SecretOwner {
  tenantId: number
  userId: number
}

const ownerData = (owner: SecretOwner) => Buffer.from(`totp:${owner.tenantId}:${owner.userId}`, 'utf8')

/**
 * A TOTP secret as the database keeps it: AES-256-GCM under the second factor's key, with the owner as additional
 * data, `v1.` + base64url(iv | ciphertext | tag). The secret must be read back to compute codes, so a hash cannot
 * serve; without the key a stolen row tells nothing.
 */
export function sealSecret(key: KeyObject, owner: SecretOwner, secret: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(ownerData(owner))
  const sealed = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${VERSION}.${sealed.toString('base64url')}`
}

/** The secret `sealSecret` sealed for `owner`, or null when it was sealed for another owner, another key, or altered. */
export function openSecret(key: KeyObject, owner: SecretOwner, stored: string): string | null {
  const [version, body] = stored.split('.', 2)
  if (version !== VERSION || body === undefined) return null
  const sealed = Buffer.from(body, 'base64url')
  if (sealed.length < IV_BYTES + TAG_BYTES) return null
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES))
  decipher.setAAD(ownerData(owner))
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES))
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8')
  } catch {
    return null
  }
}
