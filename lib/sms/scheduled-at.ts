import { AppError } from '../errors.js'

/**
 * The instant a scheduled send is due, or null for an immediate one. It must be strictly in the future on the
 * service's clock: "now" is already too late, because the scheduler would treat it as
 * an immediate send that cannot be cancelled any more.
 */
export function parseScheduledAt(value: string | null | undefined, now: number = Date.now()): Date | null {
  if (value === undefined || value === null) return null
  const at = new Date(value)
  // The schema admits RFC 3339 shapes Date cannot represent (a leap second); refuse them as input, not as 500.
  if (Number.isNaN(at.getTime())) throw new AppError('VALIDATION_FAILED', 'scheduledAt is not a valid instant.')
  if (at.getTime() <= now) {
    throw new AppError('SCHEDULED_AT_NOT_IN_FUTURE', 'scheduledAt must be later than the current time.')
  }
  return at
}
