import { hitRateWindow } from '../../db/repos/sign-in/login-guards.js'
import { rotateSessionWithinBudget, type RotationOutcome, type SessionPair } from '../../db/repos/sign-in/session-rotation.js'
import type { RevocationReason } from '../../db/schema.js'
import { AppError, type ErrorCode } from '../errors.js'
import { overBudget, type AddressBudget } from './address-budget.js'
import type { AuthDeps } from './deps.js'
import { planTokenPair, signTokenPair, verifyToken, type PlannedTokenPair, type TokenClaims, type TokenPair } from './tokens.js'

// A refresh for a session that is gone answers by the reason it ended (docs/api.md#refresh-answers).
function codeForEndedSession(reason: RevocationReason | null): ErrorCode {
  if (reason === 'SESSION_REPLACED_BY_LOGIN') return 'AUTH_017'
  if (reason === 'REFRESH_TOKEN_REUSED') return 'AUTH_016'
  return reason ? 'AUTH_007' : 'AUTH_006'
}

function codeForRefused(result: Exclude<RotationOutcome, { outcome: 'ROTATED' | 'REISSUED' }>): ErrorCode {
  switch (result.outcome) {
    case 'UNKNOWN_TENANT':
      return 'AUTH_006'
    case 'INACTIVE_TENANT':
      return 'AUTH_010'
    case 'SESSION_ENDED':
      return codeForEndedSession(result.reason)
    case 'REUSED':
      return 'AUTH_016'
    case 'INACTIVE_USER':
      return 'AUTH_015'
  }
}

/** The session's current pair, signed again now (reuse grace): same JTIs and expiries as the rotation that set it. */
function reissuedPair(planned: PlannedTokenPair, current: SessionPair): PlannedTokenPair {
  const again = (jti: string, expiresAt: Date, iat: number) => {
    const exp = Math.floor(expiresAt.getTime() / 1000)
    return { jti, iat: Math.min(iat, exp), exp, expiresAt }
  }
  return {
    access: again(current.accessJti, current.accessExpiresAt, planned.access.iat),
    refresh: again(current.refreshJti, current.refreshExpiresAt, planned.refresh.iat),
  }
}

/** The refresh token's claims, or the error to answer once the request has been counted. */
async function verifiedClaims(deps: AuthDeps, refreshToken: string | undefined): Promise<TokenClaims> {
  if (!refreshToken) throw new AppError('AUTH_005')
  return verifyToken(deps.tokenKeys, refreshToken, 'refresh')
}

/**
 * Rotates both tokens of the session the refresh token belongs to, in one database statement: the new JTIs and
 * expiries are fixed first, stored by the statement that counts the address budget and checks tenant, session and
 * user, and signed only once it answers ROTATED. The statement locks the session row, so of several refreshes with
 * one token exactly one rotates; the others present the JTI that rotation replaced, which within
 * SVC_REFRESH_REUSE_GRACE_SECONDS answers REISSUED: the session's current pair again (docs/api.md#multi-tab-grace).
 * Any older JTI, or that one after the window, is reuse: the session is revoked (committed, not rolled back with the
 * error) and AUTH_016 answers.
 *
 * Every refresh counts against the address budget: one without a usable token in a statement of its own (over the
 * budget it answers RATE_LIMITED, not its own error), a usable one inside the rotation statement, which checks the
 * budget before anything else and counts last, so refreshes from one address do not queue behind each other's
 * rotation (db/functions/svc_rotate_session.sql).
 */
export async function refreshSession(
  deps: AuthDeps,
  refreshToken: string | undefined,
  budget: AddressBudget,
): Promise<TokenPair> {
  let claims: TokenClaims
  try {
    claims = await verifiedClaims(deps, refreshToken)
  } catch (error) {
    const { hits, resetsAt } = await hitRateWindow(deps.db, budget.key)
    if (hits > budget.limit) throw overBudget('RATE_LIMITED', resetsAt)
    throw error
  }
  const planned = planTokenPair({ accessSeconds: deps.env.SVC_ACCESS_TTL, refreshSeconds: deps.env.SVC_REFRESH_TTL })
  const { hit, rotation } = await rotateSessionWithinBudget(deps.db, budget, {
    presented: {
      tenantId: claims.tenant_id,
      tenantSlug: claims.tenant_slug,
      sid: claims.sid,
      userId: Number(claims.sub),
      refreshJti: claims.jti,
    },
    next: {
      accessJti: planned.access.jti,
      accessExpiresAt: planned.access.expiresAt,
      refreshJti: planned.refresh.jti,
      refreshExpiresAt: planned.refresh.expiresAt,
    },
    now: new Date(),
    reuseGraceSeconds: deps.env.SVC_REFRESH_REUSE_GRACE_SECONDS,
  })
  if (!rotation) throw overBudget('RATE_LIMITED', hit.resetsAt)
  if (rotation.outcome !== 'ROTATED' && rotation.outcome !== 'REISSUED') throw new AppError(codeForRefused(rotation))
  // Tenant, user and sid all matched the token's claims in the database; only the role is read from it. A reissue
  // signs the session's current JTIs and expiries again, so the copies are revoked together with the original.
  return signTokenPair(
    deps.tokenKeys,
    { userId: Number(claims.sub), tenantId: claims.tenant_id, tenantSlug: claims.tenant_slug, role: rotation.role, sid: claims.sid },
    rotation.outcome === 'ROTATED' ? planned : reissuedPair(planned, rotation),
  )
}
