import type { Role } from '../../db/schema.js'
import type { TokenClaims } from './tokens.js'

/**
 * The caller a verified access token names: `request.identity` (plugins/sign-in/auth.ts) and, under the contract's field
 * names, what `validateToken` answers (lib/sign-in/token-identity.ts). Built only by identityFromClaims.
 */
export interface Identity {
  userId: number
  tenantSlug: string
  tenantId: number
  role: Role
  /** Spring-style authority kept for modules that check `ROLE_<role>`. */
  authority: `ROLE_${Role}`
  sid: string
  jti: string
  /** When the access token expires: what its revocation must outlive. */
  accessExpiresAt: Date
}

/** The one mapping from access-token claims to an identity; the claims must come from verifyToken(..., 'access'). */
export function identityFromClaims(claims: TokenClaims): Identity {
  return {
    userId: Number(claims.sub),
    tenantSlug: claims.tenant_slug,
    tenantId: claims.tenant_id,
    role: claims.role,
    authority: `ROLE_${claims.role}`,
    sid: claims.sid,
    jti: claims.jti,
    accessExpiresAt: new Date(claims.exp * 1000),
  }
}
