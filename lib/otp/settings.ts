import type { KeyObject } from 'node:crypto'
import type { Env } from '../env.js'

/** Everything issuing and checking a one-time code needs besides the transaction; built once at start. */
export interface OneTimeCodeSettings {
  /** The code key (lib/otp/code-key.ts). */
  key: KeyObject
  /** SVC_OTP_TTL_SECONDS */
  ttlSeconds: number
  /** SVC_OTP_MAX_ATTEMPTS: wrong tries after which a code is dead. */
  maxAttempts: number
  /** SVC_OTP_RESEND_SECONDS */
  resendSeconds: number
  /** SVC_OTP_DAILY_LIMIT: codes per local day, per user and per phone number. */
  dailyLimit: number
  /** SVC_TIME_ZONE: whose days the daily limit counts. */
  timeZone: string
}

export function oneTimeCodeSettings(env: Env, key: KeyObject): OneTimeCodeSettings {
  return {
    key,
    ttlSeconds: env.SVC_OTP_TTL_SECONDS,
    maxAttempts: env.SVC_OTP_MAX_ATTEMPTS,
    resendSeconds: env.SVC_OTP_RESEND_SECONDS,
    dailyLimit: env.SVC_OTP_DAILY_LIMIT,
    timeZone: env.SVC_TIME_ZONE,
  }
}
