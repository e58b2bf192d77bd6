import type { KeyObject } from 'node:crypto'
import type { KeyRing } from '../../crypto/key-ring.js'
import type { Env } from '../../env.js'

/** Everything issuing and checking a one-time code needs besides the transaction; built once at start. */
export interface OneTimeCodeSettings {
  /**
   * The first data key (lib/data-keys/ring-from-env.ts): keys the hash of every new code, and the per-number counters.
   * A promotion of another key therefore starts that day's per-number counts afresh (docs/security.md#one-time-codes).
   */
  key: KeyObject
  /**
   * The ring's other keys: a code hashed under one of them before a rotation verifies while it lives. None: `key`
   * alone.
   */
  olderKeys?: readonly KeyObject[]
  /** SVC_OTP_TTL_SECONDS */
  ttlSeconds: number
  /** SVC_OTP_MAX_ATTEMPTS: wrong tries after which a code is dead. */
  maxAttempts: number
  /** SVC_OTP_RESEND_SECONDS */
  resendSeconds: number
  /** SVC_OTP_DAILY_LIMIT: codes per local day, per user and per phone number. */
  dailyLimit: number
  /** SVC_OTP_TENANT_DAILY_VERIFICATIONS: codes that verify a number, per local day and tenant. */
  tenantDailyVerifications: number
  /** SVC_PHONE_CHANGE_HOLD_HOURS: how long after a verified phone was replaced no code goes to the new one. */
  phoneChangeHoldHours: number
  /** SVC_TIME_ZONE: whose days the daily limit counts. */
  timeZone: string
}

export function oneTimeCodeSettings(env: Env, dataKeys: KeyRing): OneTimeCodeSettings {
  const [first, ...older] = dataKeys.keys
  return {
    key: first.key,
    olderKeys: older.map((entry) => entry.key),
    ttlSeconds: env.SVC_OTP_TTL_SECONDS,
    maxAttempts: env.SVC_OTP_MAX_ATTEMPTS,
    resendSeconds: env.SVC_OTP_RESEND_SECONDS,
    dailyLimit: env.SVC_OTP_DAILY_LIMIT,
    tenantDailyVerifications: env.SVC_OTP_TENANT_DAILY_VERIFICATIONS,
    phoneChangeHoldHours: env.SVC_PHONE_CHANGE_HOLD_HOURS,
    timeZone: env.SVC_TIME_ZONE,
  }
}
