import { randomUUID } from 'node:crypto'
import { openLoginSession } from '../../db/repos/sign-in/login-session.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import type { AuthDeps, ClientInfo } from './deps.js'
import { planTokenPair, signTokenPair, type TokenPair } from './tokens.js'

/** A session stored by openSession: its id (what its audit event names) and its signed tokens. */
export interface OpenedSession {
  sid: string
  tokens: TokenPair
}

/**
 * Signs a user in, the one way a login and a registration both do it: one statement in the caller's tenant
 * transaction (svc_login_open_session) locks the user row (so two sign-ins of one user serialise), forgives the
 * user's failed logins (a login's only), replaces the session of the same device category
 * (SESSION_REPLACED_BY_LOGIN) and stores the new one. The token ids are fixed before the call and the tokens signed
 * after it, with the role of the locked row. Null when that user is gone or not ACTIVE: nothing was stored but the
 * forgiveness, which lasts only if the caller commits. Audit events are the caller's: a login and a registration
 * record different ones.
 */
export async function openSession(
  trx: TenantTx,
  deps: Pick<AuthDeps, 'tokenKeys' | 'env'>,
  subject: { userId: number; tenantId: number; tenantSlug: string },
  client: ClientInfo,
  login: { upgradedHash: string | null } | null = null,
): Promise<OpenedSession | null> {
  const sid = randomUUID()
  const planned = planTokenPair({ accessSeconds: deps.env.SVC_ACCESS_TTL, refreshSeconds: deps.env.SVC_REFRESH_TTL })
  const locked = await openLoginSession(trx, login !== null, login?.upgradedHash ?? null, {
    sid,
    userId: subject.userId,
    deviceCategory: client.deviceCategory,
    userAgent: client.userAgent?.slice(0, 512) ?? null,
    ipAddress: client.ipAddress?.slice(0, 64) ?? null,
    accessJti: planned.access.jti,
    accessExpiresAt: planned.access.expiresAt,
    refreshJti: planned.refresh.jti,
    refreshExpiresAt: planned.refresh.expiresAt,
  })
  if (locked.userStatus !== 'ACTIVE' || !locked.userRole) return null
  return { sid, tokens: await signTokenPair(deps.tokenKeys, { ...subject, role: locked.userRole, sid }, planned) }
}
