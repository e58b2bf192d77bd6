import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** Every key starts with this, so a bearer credential that is a key is told apart from an access token by its text. */
export const API_KEY_MARK = 'svck_'

// 32 random bytes, base64url: 43 characters after the mark. The first LOOKUP_LENGTH of them find the key's row
// (api_key_directory); the list shows the first PREFIX_LENGTH. Both are parts of the key, so neither is stored
// anywhere a reader of the database could assemble a key from: the hash covers all of it.
const SECRET_BYTES = 32
const LOOKUP_LENGTH = 16
const PREFIX_LENGTH = 8
const KEY_PATTERN = /^svck_[A-Za-z0-9_-]{43}$/

export interface NewApiKey {
  /** The key, shown once in the creation answer. */
  key: string
  lookupId: string
  /** `svck_` and the first characters: enough to tell keys apart in a list, useless to call with. */
  prefix: string
  keyHash: Buffer
}

/**
 * A presented key, parsed: where to find it and the hash to compare. A high-entropy random secret needs no slow
 * hash (bcrypt is for passwords people choose): SHA-256 of 256 random bits cannot be searched, and it costs about a
 * microsecond on the hottest path.
 */
export interface PresentedApiKey {
  lookupId: string
  keyHash: Buffer
}

export const apiKeyHash = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest()

export function generateApiKey(): NewApiKey {
  const secret = randomBytes(SECRET_BYTES).toString('base64url')
  const key = `${API_KEY_MARK}${secret}`
  return { key, lookupId: secret.slice(0, LOOKUP_LENGTH), prefix: `${API_KEY_MARK}${secret.slice(0, PREFIX_LENGTH)}`, keyHash: apiKeyHash(key) }
}

/** Whether a bearer credential is meant as an API key (it may still be malformed). */
export const looksLikeApiKey = (credential: string): boolean => credential.startsWith(API_KEY_MARK)

/** The key's lookup id and hash; null when the text cannot be a key this service issued. */
export function parseApiKey(credential: string): PresentedApiKey | null {
  if (!KEY_PATTERN.test(credential)) return null
  return { lookupId: credential.slice(API_KEY_MARK.length, API_KEY_MARK.length + LOOKUP_LENGTH), keyHash: apiKeyHash(credential) }
}

// Compared against when the lookup id is unknown, so an unknown key and a wrong key of a known lookup id do the
// same work (one hash, one constant-time comparison) before the same refusal.
const DUMMY_HASH = apiKeyHash(`${API_KEY_MARK}${'A'.repeat(43)}`)

/**
 * Whether the presented hash equals the stored one, in constant time. `stored` null (no such key) compares against a
 * dummy hash and answers false, so that case costs what a mismatch costs.
 */
export function apiKeyHashMatches(presented: Buffer, stored: Buffer | null): boolean {
  const equal = timingSafeEqual(presented, stored ?? DUMMY_HASH)
  return stored !== null && equal
}
