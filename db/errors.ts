// What PostgreSQL's and node-postgres' errors mean, in the data layer's own terms. lib/catalog-errors.ts maps them
// onto the error catalog, once, for the HTTP layer and the in-process contract alike.

/** The constraint a unique violation (SQLSTATE 23505) hit, or null for any other error. */
export function violatedUniqueConstraint(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null
  const { code, constraint } = error as { code?: unknown; constraint?: unknown }
  if (code !== '23505') return null
  return typeof constraint === 'string' ? constraint : ''
}

// SQLSTATEs raised by svc_request_scope (db/functions/svc_request_scope.sql, sent by db/tenant-transaction.ts).
const SCOPE_REFUSALS = {
  SV003: 'unknown-identity',
  SV004: 'revoked',
  SV010: 'tenant-inactive',
  SV015: 'user-inactive',
} as const

/**
 * Why the request scope refused an access token: it names a tenant or user that does not exist, it was revoked,
 * or its tenant or user is no longer ACTIVE.
 */
export type ScopeRefusal = (typeof SCOPE_REFUSALS)[keyof typeof SCOPE_REFUSALS]

/** The request scope's refusal carried by `error`, or null for any other error. */
export function scopeRefusalOf(error: unknown): ScopeRefusal | null {
  if (typeof error !== 'object' || error === null) return null
  if (error instanceof RequestScopeRefused) return error.refusal
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && Object.hasOwn(SCOPE_REFUSALS, code) ? SCOPE_REFUSALS[code as keyof typeof SCOPE_REFUSALS] : null
}

/** The request scope refused the caller's access token (thrown by `withRequestTransaction`). */
export class RequestScopeRefused extends Error {
  constructor(readonly refusal: ScopeRefusal) {
    super(`access token refused: ${refusal}`)
    this.name = 'RequestScopeRefused'
  }
}

// SQLSTATE raised by svc_check_daily_quota and svc_reserve_daily_quota (db/repos/sms/sms-quota.ts).
const QUOTA_EXCEEDED = 'SV020'

/**
 * The tenant's daily recipient quota refused a send (nothing the send wrote was committed): the whole seconds until
 * the quota's next local midnight, which the refusal carries as its DETAIL; else null.
 */
export function quotaRefusalOf(error: unknown): { secondsToNextDay: number } | null {
  if (typeof error !== 'object' || error === null || !('severity' in error)) return null
  const { code, detail } = error as { code?: unknown; detail?: unknown }
  if (code !== QUOTA_EXCEEDED) return null
  const seconds = Number(detail)
  return { secondsToNextDay: Number.isSafeInteger(seconds) && seconds > 0 ? seconds : 1 }
}

/** A tenant transaction was asked for without a valid tenant id: a programming error, refused before any query. */
export class TenantContextMissing extends Error {
  constructor() {
    super('missing or invalid tenant context')
    this.name = 'TenantContextMissing'
  }
}

/** SQLSTATE class 22 (data exception: a NUL byte, a value too long for its column, a number out of range). */
export function isDataException(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) && 'severity' in (error as object)
}

// SQLSTATEs of a database that cannot serve now: a statement cut by statement_timeout (57014), the server shutting
// down or starting (57P01-57P03), no connection slot (53300), every connection exception (class 08, which is also
// what a pooler answers when it has no server for the client), and named statements that a pooler mixed between
// server connections (42P05, 26000: a deployment fault, see db/driver/pool-health.ts, not the request's).
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
