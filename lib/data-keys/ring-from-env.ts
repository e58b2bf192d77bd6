import { createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto'
import { ConfigError, type Env } from '../env.js'
import { legacyKidOf, readDataKeys } from './setting.js'
import type { KeyRing, RingKey } from '../crypto/key-ring.js'

/** HKDF's `info` for the key derived from SVC_JWT_SECRET: the same secret never keys two things the same way. */
export const CODE_KEY_INFO = 'svc one-time codes'
const KEY_BYTES = 32

export type DataKeySource = 'SVC_DATA_KEYS' | 'SVC_OTP_SECRET' | 'SVC_JWT_SECRET' | 'random'

/**
 * The service's keys for data at rest, built once at start: the keys of SVC_DATA_KEYS in their order, and the key of
 * SVC_OTP_SECRET (kid `default`) or, without it, the key derived from SVC_JWT_SECRET with HKDF-SHA256 (kid `jwt`)
 * while that secret is set: last, unless an entry of its kid without a key places it, so what it sealed still opens
 * after the move to SVC_DATA_KEYS. Without SVC_DATA_KEYS that key alone is the ring, as it was the only key before key
 * ids. With none of the three, production is refused (a key that changes with every process would void every live
 * code and sealed secret on a restart, and differ between instances); other profiles get a random key for this
 * process, and `onRandom` lets the caller warn.
 */
export function dataKeyRingFromEnv(
  env: Pick<Env, 'NODE_ENV' | 'SVC_DATA_KEYS' | 'SVC_OTP_SECRET' | 'SVC_JWT_SECRET'>,
  onRandom: () => void = () => undefined,
): { ring: KeyRing; source: DataKeySource } {
  const legacy = legacyKeyOf(env)
  const configured = configuredKeys(env, legacy)
  const placed = configured.some((entry) => entry.kid === legacy?.kid)
  const [first, ...rest] = legacy && !placed ? [...configured, legacy] : configured
  if (first) {
    const source = env.SVC_DATA_KEYS ? 'SVC_DATA_KEYS' : env.SVC_OTP_SECRET ? 'SVC_OTP_SECRET' : 'SVC_JWT_SECRET'
    return { ring: { keys: [first, ...rest], legacyKid: legacy?.kid ?? null }, source }
  }
  if (env.NODE_ENV === 'production') {
    throw new ConfigError([
      'SVC_DATA_KEYS: required when NODE_ENV=production and SVC_OTP_SECRET and SVC_JWT_SECRET are unset (the keys of data at rest)',
    ])
  }
  onRandom()
  // A ring of one like the legacy keys, sealing as they do: what it seals dies with the process in any case.
  const random = { kid: 'random', key: createSecretKey(randomBytes(KEY_BYTES)) }
  return { ring: { keys: [random], legacyKid: random.kid }, source: 'random' }
}

function configuredKeys(env: Pick<Env, 'SVC_DATA_KEYS' | 'SVC_OTP_SECRET' | 'SVC_JWT_SECRET'>, legacy: RingKey | null): RingKey[] {
  if (!env.SVC_DATA_KEYS) return []
  const read = readDataKeys(env.SVC_DATA_KEYS, legacyKidOf(env))
  if ('problem' in read) throw new ConfigError([read.problem])
  // readDataKeys admits an entry without a key only for the legacy kid, which legacyKeyOf then holds.
  return read.keys.map(({ kid, key }) => (key === null ? legacy! : { kid, key: createSecretKey(key) }))
}

function legacyKeyOf(env: Pick<Env, 'SVC_OTP_SECRET' | 'SVC_JWT_SECRET'>): RingKey | null {
  if (env.SVC_OTP_SECRET) return { kid: 'default', key: createSecretKey(Buffer.from(env.SVC_OTP_SECRET, 'utf8')) }
  if (env.SVC_JWT_SECRET) return { kid: 'jwt', key: jwtDerivedKey(env.SVC_JWT_SECRET) }
  return null
}

function jwtDerivedKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), CODE_KEY_INFO, KEY_BYTES)))
}
