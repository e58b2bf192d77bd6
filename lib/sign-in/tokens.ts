import { randomUUID } from 'node:crypto'
import type { Role } from '../../db/schema.js'
import { AppError } from '../errors.js'
import type { TokenKeys } from './token-keys.js'

export type TokenType = 'access' | 'refresh'

/** Exactly the claims of docs/api.md#claims; `iss` is added by the signer from SVC_JWT_ISSUER. */
export interface TokenClaims {
  sub: string
  tenant_slug: string
  tenant_id: number
  role: Role
  type: TokenType
  sid: string
  jti: string
  iat: number
  exp: number
  iss: string
}

export interface TokenSubject {
  userId: number
  tenantSlug: string
  tenantId: number
  role: Role
  sid: string
}

export interface IssuedToken {
  token: string
  jti: string
  expiresAt: Date
}

export interface TokenPair {
  access: IssuedToken
  refresh: IssuedToken
}

export interface TokenLifetimes {
  accessSeconds: number
  refreshSeconds: number
}

/** A token's id and times, fixed before signing: refresh stores them in the statement that checks the session. */
export interface PlannedToken {
  jti: string
  iat: number
  exp: number
  expiresAt: Date
}

export interface PlannedTokenPair {
  access: PlannedToken
  refresh: PlannedToken
}

function plan(lifetimeSeconds: number, now: number): PlannedToken {
  const exp = now + lifetimeSeconds
  return { jti: randomUUID(), iat: now, exp, expiresAt: new Date(exp * 1000) }
}

export function planTokenPair(lifetimes: TokenLifetimes): PlannedTokenPair {
  const now = Math.floor(Date.now() / 1000)
  return { access: plan(lifetimes.accessSeconds, now), refresh: plan(lifetimes.refreshSeconds, now) }
}

async function sign(keys: TokenKeys, subject: TokenSubject, type: TokenType, planned: PlannedToken): Promise<IssuedToken> {
  const token = await keys.sign({
    sub: String(subject.userId),
    tenant_slug: subject.tenantSlug,
    tenant_id: subject.tenantId,
    role: subject.role,
    type,
    sid: subject.sid,
    jti: planned.jti,
    iat: planned.iat,
    exp: planned.exp,
  })
  return { token, jti: planned.jti, expiresAt: planned.expiresAt }
}

export async function signTokenPair(keys: TokenKeys, subject: TokenSubject, planned: PlannedTokenPair): Promise<TokenPair> {
  const [access, refresh] = await Promise.all([
    sign(keys, subject, 'access', planned.access),
    sign(keys, subject, 'refresh', planned.refresh),
  ])
  return { access, refresh }
}

export function issueTokenPair(keys: TokenKeys, subject: TokenSubject, lifetimes: TokenLifetimes): Promise<TokenPair> {
  return signTokenPair(keys, subject, planTokenPair(lifetimes))
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ROLES = new Set<string>(['OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT'])

function hasClaimShape(claims: Record<string, unknown>): claims is Record<string, unknown> & TokenClaims {
  return (
    typeof claims.sub === 'string' &&
    /^[1-9][0-9]{0,15}$/.test(claims.sub) &&
    typeof claims.tenant_slug === 'string' &&
    typeof claims.tenant_id === 'number' &&
    Number.isSafeInteger(claims.tenant_id) &&
    claims.tenant_id > 0 &&
    typeof claims.role === 'string' &&
    ROLES.has(claims.role) &&
    typeof claims.sid === 'string' &&
    UUID.test(claims.sid) &&
    typeof claims.jti === 'string' &&
    UUID.test(claims.jti) &&
    typeof claims.exp === 'number'
  )
}

/**
 * Verifies signature, key, algorithm, issuer, expiry, type and claim shape. Any failure is one catalog error:
 * AUTH_003 for access tokens, AUTH_006 for refresh tokens.
 */
export async function verifyToken(keys: TokenKeys, token: string, type: TokenType): Promise<TokenClaims> {
  const failure = type === 'access' ? 'AUTH_003' : 'AUTH_006'
  let claims: Readonly<Record<string, unknown>>
  try {
    claims = await keys.verify(token)
  } catch {
    throw new AppError(failure)
  }
  if (claims.type !== type || !hasClaimShape(claims)) throw new AppError(failure)
  return claims
}
