import pg from 'pg'
import { expect, inject } from 'vitest'
import { insertUserWithPassword, login } from '../auth-fixtures.js'
import { createTenant } from '../fixtures.js'
import { buildTestApp, describePostgres, itPostgres } from '../helper.js'

// One pooled connection, so a second request must wait for it; a short wait limit, so a lost connection shows as a
// 503 within the test rather than a hang.
const ONE_CONNECTION = { SVC_DB_POOL_MAX: '1', SVC_DB_CONNECT_TIMEOUT_MS: '1500' }

describePostgres('a client that hangs up while its request waits for a pooled connection', () => {
  itPostgres('gives the connection back once it arrives, so the pool keeps serving', async () => {
    const app = await buildTestApp(ONE_CONNECTION)
    const locker = new pg.Client({ connectionString: inject('databaseUrl') })
    await locker.connect()
    try {
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant, { role: 'OWNER' })
      const { bearer } = await login(app, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
      const address = await app.listen({ port: 0, host: '127.0.0.1' })
      // The first request holds the only connection: its update waits for a row another session holds.
      await locker.query('begin')
      await locker.query('select id from users where id = $1 for update', [user.id])
      const holding = fetch(`${address}/v1/me`, {
        method: 'PATCH',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Renamed after the wait' }),
      })
      await waitForLockWaiter(locker, user.id)
      // The second waits for that connection, and its client hangs up before it arrives.
      const controller = new AbortController()
      const abandoned = fetch(`${address}/v1/me`, { headers: bearer, signal: controller.signal }).catch((error: Error) => error.name)
      await new Promise((resolve) => setTimeout(resolve, 200))
      controller.abort()
      expect(await abandoned).toBe('AbortError')
      await locker.query('rollback')
      expect((await holding).status).toBe(200)
      // Without the fix the abandoned request's transaction opens on the freed connection and is never ended: every
      // later request waits out SVC_DB_CONNECT_TIMEOUT_MS and answers 503.
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${address}/v1/me`, { headers: bearer })
        expect(response.status).toBe(200)
        expect(((await response.json()) as { name: string }).name).toBe('Renamed after the wait')
      }
    } finally {
      await locker.query('rollback').catch(() => undefined)
      await locker.end()
      await app.close()
    }
  })
})

/** Until a session waits for the lock on the user's row (the holding request has taken the connection). */
async function waitForLockWaiter(locker: pg.Client, userId: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { rows } = await locker.query(`select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`)
    if (rows[0].waiting > 0) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no request waited for user ${userId}'s row`)
}
