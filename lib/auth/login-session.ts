import { randomUUID } from 'node:crypto'
import type { FailureKey } from '../../db/repos/login-admission.js'
import { openLoginSession } from '../../db/repos/login-session.js'
import type { Tenant } from '../../db/repos/tenants.js'
import { withTenant } from '../../db/tenant.js'
import type { AuthDeps, ClientInfo } from './deps.js'
import { planTokenPair, signTokenPair, type TokenPair } from './tokens.js'

/**
 * The session of a login whose password is proven, in one tenant transaction of one statement after its
 * set_config (the user lock, the failure key's forgiveness and the session writes; see openSession for the same
 * steps at registration). The token ids are fixed before the call and the tokens signed after it, with the role
 * of the locked user row. Null when that user is no longer ACTIVE: nothing was stored but the forgiveness.
 */
export async function openProvenLoginSession(
  deps: Pick<AuthDeps, 'db' | 'jwt' | 'env'>,
  subject: { userId: number; tenant: Tenant; key: FailureKey; upgradedHash: string | null },
  client: ClientInfo,
): Promise<TokenPair | null> {
  const { userId, tenant } = subject
  const sid = randomUUID()
  const planned = planTokenPair({ accessSeconds: deps.env.SVC_ACCESS_TTL, refreshSeconds: deps.env.SVC_REFRESH_TTL })
  const locked = await withTenant(deps.db, tenant.id, (trx) =>
    openLoginSession(trx, subject.key, subject.upgradedHash, {
      sid,
      userId,
      deviceCategory: client.deviceCategory,
      userAgent: client.userAgent?.slice(0, 512) ?? null,
      ipAddress: client.ipAddress?.slice(0, 64) ?? null,
      accessJti: planned.access.jti,
      accessExpiresAt: planned.access.expiresAt,
      refreshJti: planned.refresh.jti,
      refreshExpiresAt: planned.refresh.expiresAt,
    }),
  )
  if (locked.userStatus !== 'ACTIVE' || !locked.userRole) return null
  return signTokenPair(deps.jwt, { userId, tenantId: tenant.id, tenantSlug: tenant.slug, role: locked.userRole, sid }, planned)
}
