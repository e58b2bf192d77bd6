import { randomBytes, randomInt } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { expectProblem, refresh } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'

/** A random /64 of the documentation range, so the budget of one test never touches another's. */
function uniqueSlash64(): string {
  return `2001:db8:${randomInt(0x10000).toString(16)}:${randomInt(0x10000).toString(16)}`
}

describe('the address budget for IPv6 clients', () => {
  const LIMIT = 3
  const app = useTestApp({ env: { SVC_LOGIN_IP_PER_MINUTE: String(LIMIT) } })

  it('counts every address of one /64 against one budget, so rotating addresses does not escape it', async () => {
    const prefix = uniqueSlash64()
    const codes: number[] = []
    for (let i = 0; i < LIMIT + 4; i++) {
      const host = randomBytes(8).toString('hex').match(/.{4}/g)!.join(':')
      const answer = await refresh(app.current, 'not-a-token', { remoteAddress: `${prefix}:${host}` })
      codes.push(answer.response.statusCode)
    }
    expect(codes.slice(0, LIMIT).every((code) => code === 401)).toBe(true)
    expect(codes.slice(LIMIT)).toEqual([429, 429, 429, 429])
    const last = await refresh(app.current, 'not-a-token', { remoteAddress: `${prefix}::1` })
    expectProblem(last.response, 429, 'RATE_LIMITED')
  })

  it('gives another /64 its own budget', async () => {
    const prefix = uniqueSlash64()
    for (let i = 0; i <= LIMIT; i++) await refresh(app.current, 'not-a-token', { remoteAddress: `${prefix}::${i + 1}` })
    const neighbour = await refresh(app.current, 'not-a-token', { remoteAddress: `${prefix.replace(/:[0-9a-f]+$/, ':ffff')}::1` })
    expect(neighbour.response.statusCode).not.toBe(429)
  })
})
