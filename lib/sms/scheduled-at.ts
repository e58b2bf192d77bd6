import { AppError } from '../errors.js'

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * The instant a scheduled send is due, or null for an immediate one. It must be strictly in the future on the
 * service's clock: "now" is already too late, because the scheduler would treat it as an immediate send that cannot
 * be cancelled any more. And at most `maxDays` (SVC_SMS_MAX_SCHEDULE_DAYS) ahead: a send counts against the
 * tenant's daily quota the day it is made, so one scheduled for 9999-12-31 would spend today's quota on a message
 * that never leaves, and would sit in the outbox for ever.
 */
export function parseScheduledAt(value: string | null | undefined, maxDays: number, now: number = Date.now()): Date | null {
  if (value === undefined || value === null) return null
  const at = new Date(value)
  // The schema admits RFC 3339 shapes Date cannot represent (a leap second); refuse them as input, not as 500.
  if (Number.isNaN(at.getTime())) throw new AppError('VALIDATION_FAILED', 'scheduledAt is not a valid instant.')
  if (at.getTime() <= now) {
    throw new AppError('SCHEDULED_AT_NOT_IN_FUTURE', 'scheduledAt must be later than the current time.')
  }
  if (at.getTime() - now > maxDays * DAY_MS) {
    throw new AppError('SCHEDULED_AT_TOO_FAR', `scheduledAt may be at most ${maxDays} days ahead.`)
  }
  return at
}
