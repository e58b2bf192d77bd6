/** The constraint a unique violation (SQLSTATE 23505) hit, or null for any other error. */
export function violatedUniqueConstraint(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null
  const { code, constraint } = error as { code?: unknown; constraint?: unknown }
  if (code !== '23505') return null
  return typeof constraint === 'string' ? constraint : ''
}

// SQLSTATEs raised by the request scope statement (db/tenant.ts): svc_refuse_revoked_access_token() (migration
// 2026-11-23T00-00-00), svc_refuse_inactive_tenant() and svc_refuse_inactive_user() (2026-11-23T03-00-00).
const REQUEST_SCOPE_REFUSALS = { SV003: 'AUTH_003', SV004: 'AUTH_004', SV010: 'AUTH_010', SV015: 'AUTH_015' } as const

export type RequestScopeRefusal = (typeof REQUEST_SCOPE_REFUSALS)[keyof typeof REQUEST_SCOPE_REFUSALS]

/**
 * The catalog code for the request scope refusing the caller's access token: naming a tenant or user that does
 * not exist (AUTH_003), revoked (AUTH_004), tenant not ACTIVE (AUTH_010), user not ACTIVE (AUTH_015); null for any
 * other error.
 */
export function requestScopeRefusal(error: unknown): RequestScopeRefusal | null {
  if (typeof error !== 'object' || error === null) return null
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && Object.hasOwn(REQUEST_SCOPE_REFUSALS, code)
    ? REQUEST_SCOPE_REFUSALS[code as keyof typeof REQUEST_SCOPE_REFUSALS]
    : null
}

// SQLSTATEs of a database that cannot serve now: a statement cut by statement_timeout (57014), the server shutting
// down or starting (57P01-57P03), no connection slot (53300), every connection exception (class 08, which is also
// what a pooler answers when it has no server for the client), and named statements that a pooler mixed between
// server connections (42P05, 26000: a deployment fault, see db/pool-health.ts, not the request's).
const UNAVAILABLE_SQLSTATE = /^(57014|57P0[1-3]|53300|08...|42P05|26000)$/
// What node-postgres and node's sockets say when the server cannot be reached or stops answering.
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE'])
const UNAVAILABLE_MESSAGES = [
  'Query read timeout',
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'is not queryable',
]

/**
 * Whether `error` means the database is unreachable, too slow or going away, rather than anything about the
 * request: such a request answers 503 SERVICE_UNAVAILABLE and may be retried.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { code, message, errors } = error as { code?: unknown; message?: unknown; errors?: unknown }
  if (typeof code === 'string' && (UNAVAILABLE_NODE_CODES.has(code) || ('severity' in error && UNAVAILABLE_SQLSTATE.test(code)))) {
    return true
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((known) => message.includes(known))) return true
  // Connecting to a name with several addresses fails with one error per address.
  return Array.isArray(errors) && errors.length > 0 && errors.every(isDatabaseUnavailable)
}
