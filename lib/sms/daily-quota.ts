import { AppError } from '../errors.js'

/**
 * The answer to a send beyond its tenant's daily recipients (SVC_SMS_TENANT_DAILY_RECIPIENTS): Retry-After is the
 * time to the next local midnight of SVC_TIME_ZONE, which the database computed with the refusal
 * (db/functions/svc_seconds_to_local_midnight.sql).
 */
export function quotaExceeded(secondsToNextDay: number): AppError {
  return new AppError('SMS_QUOTA_EXCEEDED', undefined, { headers: { 'retry-after': String(Math.max(1, secondsToNextDay)) } })
}
