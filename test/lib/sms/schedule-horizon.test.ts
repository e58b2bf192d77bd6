import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { parseScheduledAtWithin } from '../../../lib/sms/scheduled-at.js'

const now = Date.parse('2026-05-01T10:00:00Z')
const codeOf = (fn: () => unknown) => {
  try {
    fn()
    return null
  } catch (error) {
    return error instanceof AppError ? error.code : error
  }
}

describe('parseScheduledAtWithin', () => {
  it('accepts exactly the horizon and refuses a millisecond past it', () => {
    expect(parseScheduledAtWithin('2026-07-30T10:00:00.000Z', 90, now)?.toISOString()).toBe('2026-07-30T10:00:00.000Z')
    expect(codeOf(() => parseScheduledAtWithin('2026-07-30T10:00:00.001Z', 90, now))).toBe('SCHEDULED_AT_TOO_FAR')
    expect(codeOf(() => parseScheduledAtWithin('9999-12-31T23:59:59Z', 3650, now))).toBe('SCHEDULED_AT_TOO_FAR')
  })

  it('still refuses the past first, and leaves an immediate send alone', () => {
    expect(codeOf(() => parseScheduledAtWithin('2026-05-01T10:00:00Z', 90, now))).toBe('SCHEDULED_AT_NOT_IN_FUTURE')
    expect(parseScheduledAtWithin(undefined, 90, now)).toBeNull()
  })
})
