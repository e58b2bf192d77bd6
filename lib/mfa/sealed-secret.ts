import type { KeyObject } from 'node:crypto'
import { seal, unseal } from '../crypto/seal.js'

/** Whose secret it is: the seal is bound to it, so a sealed secret copied to another user's row opens nothing. */
export interface SecretOwner {
  tenantId: number
  userId: number
}

const ownerContext = (owner: SecretOwner) => `totp:${owner.tenantId}:${owner.userId}`

/** A TOTP secret as the database keeps it (lib/crypto/seal.ts): codes are computed from it, so a hash cannot serve. */
export function sealSecret(key: KeyObject, owner: SecretOwner, secret: string): string {
  return seal(key, ownerContext(owner), secret)
}

/** The secret `sealSecret` sealed for `owner`, or null when it was sealed for another owner, another key, or altered. */
export function openSecret(key: KeyObject, owner: SecretOwner, stored: string): string | null {
  return unseal(key, ownerContext(owner), stored)
}
