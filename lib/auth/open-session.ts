import { randomUUID } from 'node:crypto'
import { insertSession, revokeSessions } from '../../db/repos/sessions.js'
import type { Role } from '../../db/schema.js'
import type { TenantTx } from '../../db/tenant.js'
import type { AuthDeps, ClientInfo } from './deps.js'
import { issueTokenPair, type TokenPair } from './tokens.js'

/**
 * Starts a session for a user whose row the caller has locked (so two logins of one user serialise): the
 * earlier session of the same device category is revoked first (SESSION_REPLACED_BY_LOGIN, reason stored before
 * the row goes), then the new one is stored with the JTIs of its fresh token pair.
 */
export async function openSession(
  trx: TenantTx,
  deps: Pick<AuthDeps, 'jwt' | 'env'>,
  subject: { userId: number; tenantId: number; tenantSlug: string; role: Role },
  client: ClientInfo,
): Promise<TokenPair> {
  await revokeSessions(
    trx,
    { userId: subject.userId, deviceCategory: client.deviceCategory },
    'SESSION_REPLACED_BY_LOGIN',
  )
  const sid = randomUUID()
  const tokens = issueTokenPair(deps.jwt, { ...subject, sid }, {
    accessSeconds: deps.env.SVC_ACCESS_TTL,
    refreshSeconds: deps.env.SVC_REFRESH_TTL,
  })
  await insertSession(trx, {
    tenantId: subject.tenantId,
    sid,
    userId: subject.userId,
    deviceCategory: client.deviceCategory,
    userAgent: client.userAgent?.slice(0, 512) ?? null,
    ipAddress: client.ipAddress?.slice(0, 64) ?? null,
    accessJti: tokens.access.jti,
    accessExpiresAt: tokens.access.expiresAt,
    refreshJti: tokens.refresh.jti,
    refreshExpiresAt: tokens.refresh.expiresAt,
  })
  return tokens
}
