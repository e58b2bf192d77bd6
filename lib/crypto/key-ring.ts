import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto'

export interface RingKey {
  readonly kid: string
  readonly key: KeyObject
}

/**
 * Keys for data at rest (docs/security.md#keys-for-data-at-rest): the first seals and keys everything new, and every
 * key opens what it sealed, so a key can join before it seals and stay until nothing uses it.
 */
export interface KeyRing {
  readonly keys: readonly [RingKey, ...RingKey[]]
  /**
   * The kid of the ring's key of SVC_OTP_SECRET or SVC_JWT_SECRET (or the random key of a process with neither), null
   * when it holds none: what that key sealed carries no kid (the release before key ids wrote `v1.`), and such a key
   * seals that way still, so an upgrade that sets no SVC_DATA_KEYS can be rolled back.
   */
  readonly legacyKid: string | null
}

export const sealsWithoutKid = (ring: KeyRing): boolean => ring.keys[0].kid === ring.legacyKid

export function keyOfKid(ring: KeyRing, kid: string): KeyObject | undefined {
  return ring.keys.find((entry) => entry.kid === kid)?.key
}

export function legacyKey(ring: KeyRing): KeyObject | undefined {
  return ring.legacyKid === null ? undefined : keyOfKid(ring, ring.legacyKid)
}

/**
 * The ring of keys derived from each key with HKDF-SHA256 under `info`, kids kept: each use (TOTP secrets, webhook
 * secrets) has keys of its own, and a kid still names the key of its use.
 */
export function derivedRing(ring: KeyRing, info: string): KeyRing {
  const derive = ({ kid, key }: RingKey): RingKey => ({
    kid,
    key: createSecretKey(Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, 32))),
  })
  const [first, ...rest] = ring.keys
  return { keys: [derive(first), ...rest.map(derive)], legacyKid: ring.legacyKid }
}

/** `kid` null: the legacy key. */
export function holdsKid(ring: KeyRing, kid: string | null): boolean {
  return kid === null ? ring.legacyKid !== null : ring.keys.some((entry) => entry.kid === kid)
}
