/** The constraint a unique violation (SQLSTATE 23505) hit, or null for any other error. */
export function violatedUniqueConstraint(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null
  const { code, constraint } = error as { code?: unknown; constraint?: unknown }
  if (code !== '23505') return null
  return typeof constraint === 'string' ? constraint : ''
}

/** SQLSTATE raised by svc_refuse_revoked_access_token() (migration 2026-11-23T00-00-00). */
const REVOKED_ACCESS_TOKEN_SQLSTATE = 'SV004'

/** Whether `error` is the database refusing a revoked access token in a request scope (AUTH_004). */
export function isRevokedAccessToken(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === REVOKED_ACCESS_TOKEN_SQLSTATE
}
