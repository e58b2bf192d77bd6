import { describe, expect, it } from 'vitest'
import { VerifiedTokens } from '../../lib/sign-in/verified-tokens.js'

describe('VerifiedTokens', () => {
  it('answers a token it holds until its expiry, and forgets it at that instant', () => {
    const cache = new VerifiedTokens<string>(10)
    cache.set('token-a', 'claims-a', 2_000)
    expect(cache.get('token-a', 1_999)).toBe('claims-a')
    expect(cache.get('token-a', 2_000)).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it('matches the exact text only', () => {
    const cache = new VerifiedTokens<string>(10)
    cache.set('header.payload.signature', 'claims', 10_000)
    expect(cache.get('header.payload.signaturE', 0)).toBeUndefined()
    expect(cache.get('header.payload.signature ', 0)).toBeUndefined()
  })

  it('holds at most its capacity, dropping the oldest first', () => {
    const cache = new VerifiedTokens<number>(3)
    for (const n of [1, 2, 3, 4]) cache.set(`t${n}`, n, 10_000)
    expect(cache.size).toBe(3)
    expect(cache.get('t1', 0)).toBeUndefined()
    expect([cache.get('t2', 0), cache.get('t3', 0), cache.get('t4', 0)]).toEqual([2, 3, 4])
  })

  it('keeps nothing with capacity 0', () => {
    const cache = new VerifiedTokens<number>(0)
    cache.set('t', 1, 10_000)
    expect(cache.get('t', 0)).toBeUndefined()
  })
})
