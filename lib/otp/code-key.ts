import { createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto'
import { ConfigError, type Env } from '../env.js'

/** HKDF's `info` for the key derived from SVC_JWT_SECRET: the same secret never keys two things the same way. */
export const CODE_KEY_INFO = 'svc one-time codes'
const KEY_BYTES = 32

export type CodeKeySource = 'SVC_OTP_SECRET' | 'SVC_JWT_SECRET' | 'random'

/**
 * The key of one-time codes' keyed hashes and of the per-number counters (lib/otp/codes.ts), built once at start:
 * SVC_OTP_SECRET when set; else derived from SVC_JWT_SECRET with HKDF-SHA256, so a deployment that already keeps one
 * secret needs no second; else, in production, the start is refused (a key that changes with every process would void
 * every live code on a restart, and differ between instances); else a random key for this process, and `onRandom`
 * lets the caller warn.
 */
export function codeKeyFromEnv(
  env: Pick<Env, 'NODE_ENV' | 'SVC_OTP_SECRET' | 'SVC_JWT_SECRET'>,
  onRandom: () => void = () => undefined,
): { key: KeyObject; source: CodeKeySource } {
  if (env.SVC_OTP_SECRET) return { key: createSecretKey(Buffer.from(env.SVC_OTP_SECRET, 'utf8')), source: 'SVC_OTP_SECRET' }
  if (env.SVC_JWT_SECRET) {
    const derived = hkdfSync('sha256', Buffer.from(env.SVC_JWT_SECRET, 'utf8'), Buffer.alloc(0), CODE_KEY_INFO, KEY_BYTES)
    return { key: createSecretKey(Buffer.from(derived)), source: 'SVC_JWT_SECRET' }
  }
  if (env.NODE_ENV === 'production') {
    throw new ConfigError(['SVC_OTP_SECRET: required when NODE_ENV=production and SVC_JWT_SECRET is unset (the key of one-time codes)'])
  }
  onRandom()
  return { key: createSecretKey(randomBytes(KEY_BYTES)), source: 'random' }
}
