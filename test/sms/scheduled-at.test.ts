import { describe, expect, it } from 'vitest'
import { AppError } from '../../lib/errors.js'
import { parseScheduledAt } from '../../lib/sms/scheduled-at.js'

const now = Date.parse('2026-05-01T10:00:00Z')

function codeOf(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    if (error instanceof AppError) return error.code
    throw error
  }
  return 'none'
}

describe('parseScheduledAt', () => {
  it('is null for an immediate send', () => {
    expect(parseScheduledAt(undefined, 90, now)).toBeNull()
    expect(parseScheduledAt(null, 90, now)).toBeNull()
  })

  it('accepts an instant strictly after now, in any offset', () => {
    expect(parseScheduledAt('2026-05-01T10:00:00.001Z', 90, now)?.toISOString()).toBe('2026-05-01T10:00:00.001Z')
    expect(parseScheduledAt('2026-05-01T19:30:00+09:00', 90, now)?.toISOString()).toBe('2026-05-01T10:30:00.000Z')
  })

  it('refuses now and the past with SCHEDULED_AT_NOT_IN_FUTURE', () => {
    expect(codeOf(() => parseScheduledAt('2026-05-01T10:00:00Z', 90, now))).toBe('SCHEDULED_AT_NOT_IN_FUTURE')
    expect(codeOf(() => parseScheduledAt('2026-05-01T18:59:59+09:00', 90, now))).toBe('SCHEDULED_AT_NOT_IN_FUTURE')
  })

  it('refuses an instant Date cannot represent as a validation failure', () => {
    expect(codeOf(() => parseScheduledAt('2026-06-30T23:59:60Z', 90, now))).toBe('VALIDATION_FAILED')
  })

  it('accepts exactly the horizon and refuses a millisecond past it', () => {
    expect(parseScheduledAt('2026-07-30T10:00:00.000Z', 90, now)?.toISOString()).toBe('2026-07-30T10:00:00.000Z')
    expect(codeOf(() => parseScheduledAt('2026-07-30T10:00:00.001Z', 90, now))).toBe('SCHEDULED_AT_TOO_FAR')
    expect(codeOf(() => parseScheduledAt('9999-12-31T23:59:59Z', 3650, now))).toBe('SCHEDULED_AT_TOO_FAR')
  })

  it('refuses the past before the horizon', () => {
    expect(codeOf(() => parseScheduledAt('2026-05-01T10:00:00Z', 90, now))).toBe('SCHEDULED_AT_NOT_IN_FUTURE')
  })
})
