import { AppError } from '../errors.js'

/** The longest range one usage report covers, in local days with both ends included: a leap year. */
export const MAX_USAGE_DAYS = 366

const DAY_MS = 86_400_000

function invalidRange(message: string): AppError {
  return new AppError('VALIDATION_FAILED', `querystring.to ${message}`, { errors: [{ field: 'querystring.to', message }] })
}

/**
 * Refuses a usage report's range that ends before it starts or spans more than MAX_USAGE_DAYS days. `from` and `to`
 * are real calendar dates (YYYY-MM-DD) already: the query schema refuses anything else.
 */
export function checkUsageRange(from: string, to: string): void {
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1
  if (days < 1) throw invalidRange('must not be before from')
  if (days > MAX_USAGE_DAYS) throw invalidRange(`must be at most ${MAX_USAGE_DAYS} days from from, both included`)
}
