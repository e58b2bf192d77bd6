import { afterEach, describe, expect, it, vi } from 'vitest'
import { awayFromTheMinuteJob } from './helper.js'

const at = (second: number) => () => new Date(Date.UTC(2026, 10, 28, 12, 0, 0) + second * 1000)

async function settledAfter(promise: Promise<void>, ms: number): Promise<boolean> {
  let settled = false
  void promise.then(() => (settled = true))
  await vi.advanceTimersByTimeAsync(ms)
  return settled
}

describe('awayFromTheMinuteJob', () => {
  afterEach(() => vi.useRealTimers())

  it('returns at once in the middle of a minute', async () => {
    vi.useFakeTimers()
    expect(await settledAfter(awayFromTheMinuteJob(at(30)), 0)).toBe(true)
    expect(await settledAfter(awayFromTheMinuteJob(at(5)), 0)).toBe(true)
  })

  it('waits until five seconds past the minute when the clock is near second 0', async () => {
    vi.useFakeTimers()
    const late = awayFromTheMinuteJob(at(58.5))
    expect(await settledAfter(late, 6_400)).toBe(false)
    expect(await settledAfter(late, 100)).toBe(true)
    const early = awayFromTheMinuteJob(at(61))
    expect(await settledAfter(early, 3_900)).toBe(false)
    expect(await settledAfter(early, 100)).toBe(true)
  })
})
