import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto'
import { legacyKey, sealsWithoutKid, type KeyRing } from '../../crypto/key-ring.js'
import { seal, unseal } from '../../crypto/seal.js'
import type { SecretOwner } from './sealed-secret.js'

// A recovery code is kept as an HMAC, which no reseal can move to another key without the code itself. So each set
// is hashed under a random key of its own, and that key is what the data keys seal (user_second_factors): a rotation
// re-seals one value per user and every code keeps matching. A set from before key ids was hashed under the second
// factor's legacy key and has no key of its own (null); the reseal seals that same key into the row.

const KEY_BYTES = 32
const ownerContext = (owner: SecretOwner) => `recovery:${owner.tenantId}:${owner.userId}`

/**
 * The key a new set of codes is hashed with, and what the user's row keeps of it. Under a ring whose first key is
 * the legacy one, none of its own: the set is hashed as before key ids, so an upgrade can still be rolled back.
 */
export function newRecoveryKey(keys: KeyRing, owner: SecretOwner): { key: KeyObject; sealed: string | null } {
  if (sealsWithoutKid(keys)) return { key: keys.keys[0].key, sealed: null }
  const bytes = randomBytes(KEY_BYTES)
  return { key: createSecretKey(bytes), sealed: seal(keys, ownerContext(owner), bytes.toString('base64url')) }
}

/** The key the user's set was hashed with, or null when the ring lacks the key that sealed it (or it was altered). */
export function openRecoveryKey(keys: KeyRing, owner: SecretOwner, sealed: string | null): KeyObject | null {
  if (sealed === null) return legacyKey(keys) ?? null
  const opened = unseal(keys, ownerContext(owner), sealed)
  return opened === null ? null : createSecretKey(Buffer.from(opened, 'base64url'))
}

/** For the reseal; null when it cannot be opened. */
export function resealRecoveryKey(keys: KeyRing, owner: SecretOwner, sealed: string | null): string | null {
  const key = openRecoveryKey(keys, owner, sealed)
  return key === null ? null : seal(keys, ownerContext(owner), key.export().toString('base64url'))
}
