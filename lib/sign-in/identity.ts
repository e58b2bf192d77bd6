import type { Role } from '../../db/schema.js'
import type { ApiKeyCaller } from '../api-keys/key-resolver.js'
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
  /**
   * The API key the request presented (identityFromApiKey), else null. A key has no session and no access token:
   * `sid` and `jti` are empty then, and only routes that name a key scope (lib/http/access.ts), none of which reads
   * them, admit a key.
   */
  apiKeyId: number | null
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
    apiKeyId: null,
  }
}

/** The caller an API key acts as: its creator, in the creator's tenant (lib/api-keys/key-resolver.ts). */
export function identityFromApiKey(caller: ApiKeyCaller): Identity {
  return {
    userId: caller.userId,
    tenantSlug: caller.tenantSlug,
    tenantId: caller.tenantId,
    role: caller.role,
    authority: `ROLE_${caller.role}`,
    sid: '',
    jti: '',
    accessExpiresAt: new Date(0),
    apiKeyId: caller.apiKeyId,
  }
}
