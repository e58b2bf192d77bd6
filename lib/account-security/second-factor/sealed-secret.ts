import type { KeyRing } from '../../crypto/key-ring.js'
import { seal, unseal } from '../../crypto/seal.js'

/** Whose secret it is: the seal is bound to it, so a sealed secret copied to another user's row opens nothing. */
export interface SecretOwner {
  tenantId: number
  userId: number
}

const ownerContext = (owner: SecretOwner) => `totp:${owner.tenantId}:${owner.userId}`

/** A TOTP secret as the database keeps it (lib/crypto/seal.ts): codes are computed from it, so a hash cannot serve. */
export function sealSecret(keys: KeyRing, owner: SecretOwner, secret: string): string {
  return seal(keys, ownerContext(owner), secret)
}

/** The secret sealed for `owner`, or null when it was sealed for another owner, by a key the ring lacks, or altered. */
export function openSecret(keys: KeyRing, owner: SecretOwner, stored: string): string | null {
  return unseal(keys, ownerContext(owner), stored)
}
