import { sql } from 'kysely'
import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { insertUserWithPassword, login, until } from '../support/auth-fixtures.js'
import { createTenant, owner } from '../support/fixtures.js'
import { buildAppWith, buildTestApp, describePostgres, itPostgres } from '../support/helper.js'
import { actor } from '../support/staff-fixtures.js'

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
      const lockerPid = await backendPid(locker)
      const holding = fetch(`${address}/v1/me`, {
        method: 'PATCH',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Renamed after the wait' }),
      })
      await until(() => aSessionWaitsFor(lockerPid), 10_000)
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

describe('a client that hangs up while an extension opens its request', () => {
  it('the extension hears of the end once, after its own beforeOpen, and the transaction that opened is ended', async () => {
    const events: string[] = []
    let letThrough!: () => void
    const gate = new Promise<void>((resolve) => (letThrough = resolve))
    const app = await buildAppWith(async (test) => {
      test.requestTransaction.extend({
        name: 'gated',
        appliesTo: (config) => (config as { gated?: boolean }).gated === true,
        async beforeOpen() {
          events.push('beforeOpen started')
          await gate
          events.push('beforeOpen done')
          return 'continue'
        },
        async afterEnd(_request, end) {
          events.push(`afterEnd ${end.outcome}`)
        },
      })
      test.get('/test/gated', { config: { access: 'user', gated: true } as never }, async () => {
        events.push('handler')
        return { ok: true }
      })
    })
    try {
      const tenant = await createTenant()
      const address = await app.listen({ port: 0, host: '127.0.0.1' })
      const controller = new AbortController()
      const abandoned = fetch(`${address}/test/gated`, { headers: (await actor(app, tenant, 'STUDENT')).headers, signal: controller.signal }).catch(
        (error: Error) => error.name,
      )
      await until(() => events.includes('beforeOpen started'), 10_000)
      controller.abort()
      expect(await abandoned).toBe('AbortError')
      await new Promise((resolve) => setTimeout(resolve, 200))
      // Without the fix the safety net ran the end at once: `afterEnd not-opened` while beforeOpen was still at work,
      // and the transaction opened afterwards was never ended.
      expect(events).toEqual(['beforeOpen started'])
      letThrough()
      await until(() => events.length >= 3)
      expect(events).toEqual(['beforeOpen started', 'beforeOpen done', 'afterEnd rolled-back'])
    } finally {
      letThrough()
      await app.close()
    }
  })
})

async function backendPid(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid')
  return rows[0]!.pid
}

/** A session waits for a lock that `holderPid` holds: this test's request, not one of another test file running at
 * the same time (read through the owner pool, outside any transaction: a transaction would see pg_stat_activity as
 * it was at its first look). */
async function aSessionWaitsFor(holderPid: number): Promise<boolean> {
  const { rows } = await sql<{ waiting: number }>`
    select count(*)::int as waiting from pg_stat_activity where ${holderPid}::int = any(pg_blocking_pids(pid))`.execute(owner())
  return rows[0]!.waiting > 0
}
