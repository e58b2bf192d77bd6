import { sql } from 'kysely'
import { describe, expect } from 'vitest'
import { decodeJwt, refresh, uniqueAddress, until } from '../support/auth-fixtures.js'
import { itConcurrent, itPostgres, useTestApp } from '../support/helper.js'
import { blockedBy, holdLocks } from '../support/lock-holder.js'
import { portalUser } from './portal-users.js'

/**
 * Every refresh counts against its address's budget, one counter row per address and minute. Clients behind one
 * address (a NAT, a carrier gateway) refresh different sessions; none may wait for another's rotation.
 */
describe('POST /v1/refresh and the address budget', () => {
  const app = useTestApp()

  itPostgres('does not make a refresh wait while another session of the same address is still rotating', async () => {
    const address = uniqueAddress()
    const slow = await (await portalUser(app.current)).signIn()
    const other = await (await portalUser(app.current)).signIn()
    const slowSid = decodeJwt(slow.refreshToken).sid as string

    // Hold the slow session's row, as a rotation still running would: its refresh waits inside its statement.
    const holder = await holdLocks(async (trx) => {
      await sql`select set_config('app.tenant_id', ${String(decodeJwt(slow.refreshToken).tenant_id)}, true)`.execute(trx)
      await sql`select 1 from sessions where sid = ${slowSid}::uuid for update`.execute(trx)
    })
    try {
      const slowRefresh = refresh(app.current, slow.refreshToken, { remoteAddress: address })
      await until(async () => (await blockedBy(holder.pid)).some((waiting) => waiting.query.includes('svc_rotate_session')))

      const answered = await Promise.race([
        refresh(app.current, other.refreshToken, { remoteAddress: address }).then((result) => result.response.statusCode),
        new Promise<string>((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000)),
      ])
      expect(answered).toBe(200)

      await holder.release()
      expect((await slowRefresh).response.statusCode).toBe(200)
    } finally {
      await holder.release()
    }
  })

  describe('a burst from one address', () => {
    const LIMIT = 2
    const POOL = 5
    const limited = useTestApp({ env: { SVC_LOGIN_IP_PER_MINUTE: String(LIMIT), SVC_DB_POOL_MAX: String(POOL) } })

    itConcurrent('passes no more than the budget plus the refreshes running at that instant, then refuses', async () => {
      const sessions = []
      for (let i = 0; i < 8; i++) sessions.push(await (await portalUser(limited.current)).signIn({ remoteAddress: uniqueAddress() }))
      const address = uniqueAddress()

      const answers = await Promise.all(
        sessions.map((session) => refresh(limited.current, session.refreshToken, { remoteAddress: address })),
      )

      const codes = answers.map((answer) => answer.response.statusCode)
      expect(codes.every((code) => code === 200 || code === 429)).toBe(true)
      const passed = codes.filter((code) => code === 200).length
      expect(passed).toBeGreaterThanOrEqual(LIMIT)
      // Each statement reads the count before the others add to it, so at most one per connection more.
      expect(passed).toBeLessThanOrEqual(LIMIT + POOL - 1)
      const after = await refresh(limited.current, sessions[0]!.refreshToken, { remoteAddress: address })
      expect(after.response.statusCode).toBe(429)
    })
  })
})
