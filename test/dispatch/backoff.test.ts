import { describe, expect, it } from 'vitest'
import { retryDelaySeconds } from '../../lib/dispatch/backoff.js'

const lowest = () => 0
const highest = () => 1 - Number.EPSILON

describe('retryDelaySeconds', () => {
  it('waits the base delay before the first retry and doubles it per attempt', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelaySeconds(attempt, 30, lowest))).toEqual([30, 60, 120, 240, 480])
  })

  it('stops doubling at 15 minutes', () => {
    expect(retryDelaySeconds(6, 30, lowest)).toBe(900)
    expect(retryDelaySeconds(40, 30, lowest)).toBe(900)
    expect(retryDelaySeconds(1, 3600, lowest)).toBe(900)
  })

  it('adds at most 20 % jitter and never shortens the delay', () => {
    for (const [attempt, base] of [[1, 30], [3, 30], [9, 30], [1, 1]] as const) {
      const exact = Math.min(base * 2 ** (attempt - 1), 900)
      expect(retryDelaySeconds(attempt, base, highest)).toBeLessThanOrEqual(exact * 1.2)
      expect(retryDelaySeconds(attempt, base, highest)).toBeGreaterThan(exact * 1.19)
      for (let i = 0; i < 200; i++) {
        const delay = retryDelaySeconds(attempt, base)
        expect(delay).toBeGreaterThanOrEqual(exact)
        expect(delay).toBeLessThanOrEqual(exact * 1.2)
      }
    }
  })
})
