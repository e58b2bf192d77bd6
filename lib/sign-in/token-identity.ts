import type { Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import { type TenantTx, withRequestTransaction } from '../../db/tenant-transaction.js'
import { catalogErrorFor } from '../catalog-errors.js'
import type { TokenIdentity, UserInfo } from './contract-types.js'
import { findCurrentUser } from './current-user.js'
import { identityFromClaims, type Identity } from './identity.js'
import type { TokenKeys } from './token-keys.js'
import { verifyToken } from './tokens.js'

interface TokenDeps {
  db: Kysely<DB>
  tokenKeys: TokenKeys
}

/**
 * Checks an access token exactly as the HTTP layer does: signature, issuer, type, expiry and claim shape
 * (AUTH_003), then the revocation list (AUTH_004) and the tenant's and user's status (AUTH_010, AUTH_015) in the
 * token's tenant transaction, and runs `fn` there.
 */
async function withAccessToken<T>(
  deps: TokenDeps,
  token: string,
  fn: (trx: TenantTx, identity: Identity) => Promise<T>,
): Promise<T> {
  const identity = identityFromClaims(await verifyToken(deps.tokenKeys, token, 'access'))
  const scope = { tenantId: identity.tenantId, accessJti: identity.jti, userId: identity.userId }
  try {
    return await withRequestTransaction(deps.db, scope, (trx) => fn(trx, identity))
  } catch (error) {
    throw catalogErrorFor(error) ?? error
  }
}

export function validateToken(deps: TokenDeps, token: string): Promise<TokenIdentity> {
  return withAccessToken(deps, token, async (_trx, identity) => tokenIdentityOf(identity))
}

function tokenIdentityOf(identity: Identity): TokenIdentity {
  const { userId, tenantId, tenantSlug, role, sid, jti, accessExpiresAt } = identity
  return { userId, tenantId, tenantSlug, role, sid, jti, expiresAt: accessExpiresAt }
}

export function getUserInfo(deps: TokenDeps, token: string): Promise<UserInfo> {
  return withAccessToken(deps, token, async (trx, identity) => {
    const user = await findCurrentUser(trx, identity.userId)
    return {
      id: user.id,
      // The field is named `email` but holds the login id. The mismatch is part of the
      // contract until the interface changes; never fill it with anything else.
      email: user.userLoginId,
      name: user.name,
      role: user.role,
      tenantSlug: identity.tenantSlug,
      tenantId: identity.tenantId,
    }
  })
}
