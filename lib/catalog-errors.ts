import { isDataException, isDatabaseUnavailable, quotaRefusalOf, scopeRefusalOf, TenantContextMissing, type ScopeRefusal } from '../db/errors.js'
import { AppError, type ErrorCode } from './errors.js'
import { quotaExceeded } from './sms/daily-quota.js'

const REFUSAL_CODES: Record<ScopeRefusal, ErrorCode> = {
  'unknown-identity': 'AUTH_003',
  revoked: 'AUTH_004',
  'tenant-inactive': 'AUTH_010',
  'user-inactive': 'AUTH_015',
}

/** How long a client should wait before retrying a 503 (seconds). */
export const RETRY_AFTER_SECONDS = 1

export function serviceUnavailable(detail?: string): AppError {
  return new AppError('SERVICE_UNAVAILABLE', detail, { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } })
}

/** The catalog's answer to an access token the request scope refused. */
export function refusalError(refusal: ScopeRefusal): AppError {
  return new AppError(REFUSAL_CODES[refusal])
}

/**
 * The one mapping from what the data layer reports to the error catalog, shared by the HTTP error handler, the
 * request transaction's end (plugins/platform/tenant-tx.ts) and the in-process contract. Null for errors the data layer
 * does not explain (the caller decides: usually INTERNAL_ERROR).
 */
export function catalogErrorFor(error: unknown): AppError | null {
  if (error instanceof AppError) return error
  const refusal = scopeRefusalOf(error)
  if (refusal) return refusalError(refusal)
  // The daily recipient quota, which a send's transaction checks last (on PostgreSQL, with its commit).
  const quota = quotaRefusalOf(error)
  if (quota) return quotaExceeded(quota.secondsToNextDay)
  // Bad input the schemas let through; the transaction has rolled back, so the client gets a 400, not a 500.
  if (isDataException(error)) return new AppError('VALIDATION_FAILED', 'A value in the request is not acceptable.')
  // Unreachable, timed out or shutting down: nothing was committed, and the same request may be sent again.
  if (isDatabaseUnavailable(error)) return serviceUnavailable('The database is not answering; try again shortly.')
  if (error instanceof TenantContextMissing) return new AppError('INTERNAL_ERROR', error.message)
  return null
}
