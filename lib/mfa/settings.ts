import { hkdfSync, createSecretKey, type KeyObject } from 'node:crypto'
import type { Env } from '../env.js'

/** HKDF's `info` for the second factor's key: derived from the code key, never the same key used twice over. */
export const FACTOR_KEY_INFO = 'svc second factor'

/** What the second factor needs besides the transaction; built once at start (plugins/second-factor.ts). */
export interface MfaSettings {
  /**
   * Seals TOTP secrets (lib/mfa/sealed-secret.ts) and keys the hashes of recovery codes: derived from the code key
   * (lib/otp/code-key.ts), so it is as stable across instances and restarts as the codes are.
   */
  key: KeyObject
  /** SVC_MFA_TOKEN_TTL_SECONDS: how long the second step may follow the password. */
  tokenTtlSeconds: number
}

export function mfaSettings(env: Pick<Env, 'SVC_MFA_TOKEN_TTL_SECONDS'>, codeKey: KeyObject): MfaSettings {
  const derived = hkdfSync('sha256', codeKey, Buffer.alloc(0), FACTOR_KEY_INFO, 32)
  return { key: createSecretKey(Buffer.from(derived)), tokenTtlSeconds: env.SVC_MFA_TOKEN_TTL_SECONDS }
}
