import { findRevocationReason, findSessionForUpdate, revokeSessions, rotateSessionTokens } from '../../db/repos/sessions.js'
import { revokeAccessToken } from '../../db/repos/revoked-tokens.js'
import { findTenantById } from '../../db/repos/tenants.js'
import { findUserById } from '../../db/repos/users.js'
import type { RevocationReason } from '../../db/schema.js'
import { withTenant } from '../../db/tenant.js'
import { AppError, type ErrorCode } from '../errors.js'
import type { AuthDeps } from './deps.js'
import { issueTokenPair, verifyToken, type TokenPair } from './tokens.js'

// DECISIONS section 2: a refresh for a session that is gone answers by the reason it ended.
function codeForEndedSession(reason: RevocationReason | undefined): ErrorCode {
  if (reason === 'SESSION_REPLACED_BY_LOGIN') return 'AUTH_017'
  if (reason === 'REFRESH_TOKEN_REUSED') return 'AUTH_016'
  return reason ? 'AUTH_007' : 'AUTH_006'
}

type Outcome = { ok: true; tokens: TokenPair } | { ok: false; code: ErrorCode }

/**
 * Rotates both tokens of the session the refresh token belongs to. The session row is locked, so of several
 * refreshes with one token exactly one rotates; the others present a JTI that is no longer current, which is
 * reuse: the session is revoked (committed, not rolled back with the error) and AUTH_016 answers.
 */
export async function refreshSession(deps: AuthDeps, refreshToken: string | undefined): Promise<TokenPair> {
  if (!refreshToken) throw new AppError('AUTH_005')
  const claims = verifyToken(deps.jwt, refreshToken, 'refresh')
  const tenant = await findTenantById(deps.db, claims.tenant_id)
  if (!tenant || tenant.slug !== claims.tenant_slug) throw new AppError('AUTH_006')
  if (tenant.status !== 'ACTIVE') throw new AppError('AUTH_010')

  const outcome = await withTenant(deps.db, tenant.id, async (trx): Promise<Outcome> => {
    const session = await findSessionForUpdate(trx, claims.sid)
    if (!session) return { ok: false, code: codeForEndedSession(await findRevocationReason(trx, claims.sid)) }
    if (session.refreshJti !== claims.jti || session.userId !== Number(claims.sub)) {
      await revokeSessions(trx, { sid: session.sid }, 'REFRESH_TOKEN_REUSED')
      return { ok: false, code: 'AUTH_016' }
    }
    const user = await findUserById(trx, session.userId)
    if (!user || user.status !== 'ACTIVE') return { ok: false, code: 'AUTH_015' }
    const tokens = issueTokenPair(
      deps.jwt,
      { userId: user.id, tenantId: tenant.id, tenantSlug: tenant.slug, role: user.role, sid: session.sid },
      { accessSeconds: deps.env.SVC_ACCESS_TTL, refreshSeconds: deps.env.SVC_REFRESH_TTL },
    )
    // The access token being replaced stops working now, not at its expiry.
    await revokeAccessToken(trx, session.accessJti, session.accessExpiresAt)
    await rotateSessionTokens(trx, session.sid, {
      accessJti: tokens.access.jti,
      accessExpiresAt: tokens.access.expiresAt,
      refreshJti: tokens.refresh.jti,
      refreshExpiresAt: tokens.refresh.expiresAt,
    })
    return { ok: true, tokens }
  })
  if (!outcome.ok) throw new AppError(outcome.code)
  return outcome.tokens
}
