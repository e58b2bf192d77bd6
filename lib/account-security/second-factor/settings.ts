import type { Env } from '../../env.js'
import { derivedRing, type KeyRing } from '../../crypto/key-ring.js'

/** HKDF's `info` for the second factor's keys: derived from the data keys, never the same key used twice over. */
export const FACTOR_KEY_INFO = 'svc second factor'

/** What the second factor needs besides the transaction; built once at start (plugins/account-security/second-factor.ts). */
export interface MfaSettings {
  /**
   * Seal TOTP secrets (lib/account-security/second-factor/sealed-secret.ts) and recovery-code keys (lib/account-security/second-factor/recovery-key.ts): one derived from
   * each data key (lib/data-keys/ring-from-env.ts), kids kept, so they rotate with the data keys.
   */
  keys: KeyRing
  /** SVC_MFA_TOKEN_TTL_SECONDS: how long the second step may follow the password. */
  tokenTtlSeconds: number
}

export function mfaSettings(env: Pick<Env, 'SVC_MFA_TOKEN_TTL_SECONDS'>, dataKeys: KeyRing): MfaSettings {
  return { keys: derivedRing(dataKeys, FACTOR_KEY_INFO), tokenTtlSeconds: env.SVC_MFA_TOKEN_TTL_SECONDS }
}
