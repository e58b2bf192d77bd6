import { AppError } from '../errors.js'

/** Whole seconds until the next UTC midnight, when the daily quota starts again (at least 1). */
export function secondsToNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000))
}

/** The answer to a send beyond its tenant's daily recipients (SVC_SMS_TENANT_DAILY_RECIPIENTS). */
export function quotaExceeded(now = new Date()): AppError {
  return new AppError('SMS_QUOTA_EXCEEDED', undefined, { headers: { 'retry-after': String(secondsToNextUtcDay(now)) } })
}
