import { createHash, randomBytes } from 'node:crypto'

/** The cookie that carries a login's second step from its password step (Path=/v1/login). */
export const MFA_COOKIE = 'svc_mfa_token'

/** A login's second-step token as the cookie holds it: its tenant, and 32 random bytes. */
export interface MfaToken {
  tenantId: number
  /** The cookie's value. */
  text: string
}

/** A new token for a login attempt of a user of `tenantId`. */
export function newMfaToken(tenantId: number): MfaToken {
  return { tenantId, text: `${tenantId}.${randomBytes(32).toString('base64url')}` }
}

const TOKEN_PATTERN = /^([1-9][0-9]{0,17})\.([A-Za-z0-9_-]{43})$/

/** The token a cookie holds, or null when it is not one: a tenant named in it means nothing until its row is found. */
export function parseMfaToken(text: string | undefined): MfaToken | null {
  if (text === undefined) return null
  const match = TOKEN_PATTERN.exec(text)
  const tenantId = Number(match?.[1])
  return match && Number.isSafeInteger(tenantId) ? { tenantId, text } : null
}

/** What the database keeps of a token: its SHA-256 (256 random bits need no key and no slow hash). */
export function mfaTokenHash(token: MfaToken): string {
  return createHash('sha256').update(token.text).digest('hex')
}
