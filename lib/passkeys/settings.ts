import { webAuthnOrigins, type Env } from '../env.js'

/** The relying party passkeys are made for, or null when passkeys are off (PASSKEYS_DISABLED). */
export interface PasskeySettings {
  rpId: string
  rpName: string
  /** The exact origins whose pages may run a ceremony (clientDataJSON.origin must be one). */
  origins: string[]
  /** How long a challenge lives, in seconds. */
  challengeSeconds: number
  /** At most this many passkeys per user. */
  maxPerUser: number
}

export const PASSKEY_CHALLENGE_SECONDS = 300
export const PASSKEYS_PER_USER = 10

/** loadEnv has refused a half or malformed configuration; here both settings are there or neither. */
export function passkeySettings(env: Env): PasskeySettings | null {
  if (env.SVC_WEBAUTHN_RP_ID === undefined || env.SVC_WEBAUTHN_ORIGINS === undefined) return null
  const listed = webAuthnOrigins(env.SVC_WEBAUTHN_RP_ID, env.SVC_WEBAUTHN_ORIGINS)
  if ('problem' in listed) throw new Error(listed.problem)
  return {
    rpId: env.SVC_WEBAUTHN_RP_ID,
    rpName: env.SVC_WEBAUTHN_RP_NAME,
    origins: listed.origins,
    challengeSeconds: PASSKEY_CHALLENGE_SECONDS,
    maxPerUser: PASSKEYS_PER_USER,
  }
}
