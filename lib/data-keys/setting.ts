import { collectKeys, readJsonSetting } from '../json-setting.js'

/** `key` null: the entry places the key of SVC_OTP_SECRET or SVC_JWT_SECRET (kid `default` or `jwt`) there. */
export interface ConfiguredDataKey {
  kid: string
  key: Buffer | null
}

export type DataKeysResult = { keys: ConfiguredDataKey[] } | { problem: string }

export const MIN_DATA_KEY_BYTES = 32
// A kid is written into every sealed value (`v2.<kid>.<...>`): no dot, and short enough to cost nothing per row.
const KID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/
/**
 * The kid of the key a deployment had before SVC_DATA_KEYS (lib/data-keys/ring-from-env.ts): `default` for
 * SVC_OTP_SECRET's, else `jwt` for SVC_JWT_SECRET's. Both kids are reserved, so a kid always names one key.
 */
export type LegacyKid = 'default' | 'jwt' | null
const SECRET_OF = { default: 'SVC_OTP_SECRET', jwt: 'SVC_JWT_SECRET' } as const

export function legacyKidOf(env: { SVC_OTP_SECRET?: string | undefined; SVC_JWT_SECRET?: string | undefined }): LegacyKid {
  return env.SVC_OTP_SECRET ? 'default' : env.SVC_JWT_SECRET ? 'jwt' : null
}

/**
 * Reads SVC_DATA_KEYS: a JSON array of `{kid, key}` (key: base64 of at least 32 bytes), as text or `file:` and a path
 * to it; `{kid}` alone, for `legacy`, places the secrets' key. The first problem stops the start; a problem names a key
 * by its position and kid, never by its material, since start-up errors end up in logs.
 */
export function readDataKeys(setting: string, legacy: LegacyKid): DataKeysResult {
  const read = readJsonSetting('SVC_DATA_KEYS', setting, 'an array of {"kid", "key"}')
  if ('problem' in read) return read
  const entries = read.value
  if (!Array.isArray(entries) || entries.length === 0) {
    return { problem: 'SVC_DATA_KEYS: needs a non-empty JSON array of {"kid", "key"}, the key that seals first' }
  }
  return collectKeys('SVC_DATA_KEYS', entries, (entry) => dataKeyOf(entry, legacy))
}

function dataKeyOf(entry: unknown, legacy: LegacyKid): ConfiguredDataKey | { problem: string } {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return { problem: 'not a {"kid", "key"} object' }
  const { kid, key, ...rest } = entry as Record<string, unknown>
  // A misspelt member would otherwise be dropped without a word.
  if (Object.keys(rest).length > 0) return { problem: `only kid and key are read (unknown: ${Object.keys(rest).map((name) => JSON.stringify(name)).join(', ')})` }
  if (typeof kid !== 'string' || !KID_PATTERN.test(kid)) return { problem: 'needs a kid of 1 to 64 letters, digits, _ or -' }
  if (kid === 'default' || kid === 'jwt') {
    if (key !== undefined) return { problem: `kid ${JSON.stringify(kid)} is the key of ${SECRET_OF[kid]}: give a new key another kid` }
    if (kid !== legacy) return { problem: `names the key of ${SECRET_OF[kid]}, which ${legacy === null ? 'is unset' : `is not this configuration's (that is ${JSON.stringify(legacy)})`}` }
    return { kid, key: null }
  }
  if (typeof key !== 'string' || !BASE64.test(key)) return { problem: 'needs key, in base64' }
  const bytes = Buffer.from(key, 'base64')
  if (bytes.length < MIN_DATA_KEY_BYTES) return { problem: `a key needs at least ${MIN_DATA_KEY_BYTES} bytes (got ${bytes.length})` }
  return { kid, key: bytes }
}
