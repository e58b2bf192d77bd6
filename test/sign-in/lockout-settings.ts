import { expect } from 'vitest'
import { expectProblem, type Response } from '../support/auth-fixtures.js'

/** A login id locks after this many failures in a row (low, so a test reaches it quickly). */
export const MAX_FAILURES = 3
export const LOCK_SECONDS = 60

/** The app settings for the two numbers above: `buildTestApp(LOCKOUT_SETTINGS)`. */
export const LOCKOUT_SETTINGS = { SVC_LOGIN_MAX_FAILURES: String(MAX_FAILURES), SVC_LOGIN_LOCK_SECONDS: String(LOCK_SECONDS) }

/** AUTH_018, telling the client to come back within the lock period. */
export function expectLocked(response: Response) {
  expectProblem(response, 429, 'AUTH_018')
  const retryAfter = Number(response.headers['retry-after'])
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(LOCK_SECONDS)
}
