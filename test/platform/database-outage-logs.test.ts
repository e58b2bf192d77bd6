import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, expect, inject } from 'vitest'
import { createWebhookDeliverer } from '../../lib/events/deliverer.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { buildAppLoggingTo, describePostgres, itPostgres, testEnv } from '../support/helper.js'
import { minutesFromNow, newKey, recipients, send } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

type Line = Record<string, unknown> & { level: number; msg: string }

const WARN = 40
const ERROR = 50

// An instance cut off from its database answers every request 503; what an operator reads meanwhile is one warning
// when the outage starts and one line when it ends, with counts, never an error with a stack per refused request.
// The database is reached through a loopback proxy the test cuts and restores.
describePostgres('log lines of a database outage', () => {
  let proxy: TcpProxy
  let app: FastifyInstance
  let staff: Actor
  const lines: Line[] = []

  beforeAll(async () => {
    const target = new URL(inject('runtimeDatabaseUrl'))
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const env = testEnv({ LOG_LEVEL: 'info', DATABASE_URL: proxy.through(inject('runtimeDatabaseUrl')), SVC_DB_CONNECT_TIMEOUT_MS: '1000' })
    app = await buildAppLoggingTo(
      env,
      (line) => lines.push(JSON.parse(line) as Line),
      (service) =>
        void service.register(async (scope) => {
          scope.get('/test/outage/bug', { config: { access: 'public' } }, async () => {
            throw new Error('a bug, not an outage')
          })
          // Reads, then loses the database before its transaction commits.
          scope.post('/test/outage/commit', { config: { access: 'user' } }, async (request) => {
            await request.db.selectFrom('users').select('id').limit(1).execute()
            proxy.cut()
            return { ok: true }
          })
        }),
    )
    staff = (await academy(app)).owner
  })
  afterAll(async () => {
    proxy.thaw()
    await app.close()
    await proxy.close()
  })

  const me = () => app.inject({ method: 'GET', url: '/v1/me', headers: staff.headers })
  const readiness = () => app.inject({ method: 'GET', url: '/actuator/health/readiness' })
  const linesSince = (mark: number) => lines.slice(mark)
  const named = (from: Line[], msg: string) => from.filter((line) => line.msg === msg)

  itPostgres('warns once when the database becomes unreachable, counts the refusals, and says once when it is back', async () => {
    expect((await me()).statusCode).toBe(200)
    const mark = lines.length
    proxy.cut()
    const refused: LightMyRequestResponse[] = []
    try {
      for (let round = 0; round < 5; round++) {
        refused.push(await me(), await me())
        refused.push(await app.inject({ method: 'POST', url: '/v1/login', payload: { userLoginId: 'nobody', password: 'Wrong-password-1', customId: 'nowhere' } }))
        refused.push(await send(app, staff, { recipients: recipients(2), title: 't', content: 'c', scheduledAt: minutesFromNow(60) }, newKey()))
      }
      for (const response of refused) expectProblem(response, 503, 'SERVICE_UNAVAILABLE')
      expect(refused).toHaveLength(20)
      // Work outside requests meets the same outage: a probe and the webhook deliverer's claim.
      expect((await readiness()).statusCode).toBe(503)
      const deliverer = createWebhookDeliverer({
        db: app.db,
        log: app.log.child({ component: 'webhooks' }),
        sealingKey: app.webhooks.sealingKey,
        timeoutMs: 1000,
        allowPrivate: true,
        concurrency: 1,
        tenantConcurrency: 1,
        databaseOutage: app.databaseOutage,
      })
      deliverer.kick()
      await deliverer.stop()
    } finally {
      proxy.thaw()
    }

    const during = linesSince(mark)
    expect(during.filter((line) => line.level >= ERROR)).toEqual([])
    expect(during.filter((line) => JSON.stringify(line).includes('stack'))).toEqual([])
    const warnings = during.filter((line) => line.level >= WARN)
    expect(warnings).toEqual([expect.objectContaining({ level: WARN, msg: 'database unreachable', source: 'request' })])
    expect(typeof warnings[0]!.reason).toBe('string')

    // The first commit after the outage ends it.
    expect((await me()).statusCode).toBe(200)
    const back = named(linesSince(mark), 'database reachable again')
    expect(back).toEqual([
      expect.objectContaining({ level: 30, refusedRequests: 20, failedWork: { readiness: 1, webhooks: 1 }, durationMs: expect.any(Number) }),
    ])
    expect((await me()).statusCode).toBe(200)
    expect(named(linesSince(mark), 'database reachable again')).toHaveLength(1)
  })

  itPostgres('logs a second outage again, and a readiness probe that answers ends it', async () => {
    expect((await me()).statusCode).toBe(200)
    const mark = lines.length
    proxy.cut()
    try {
      for (let index = 0; index < 3; index++) expectProblem(await me(), 503, 'SERVICE_UNAVAILABLE')
    } finally {
      proxy.thaw()
    }
    expect((await readiness()).statusCode).toBe(200)
    const since = linesSince(mark)
    expect(named(since, 'database unreachable')).toHaveLength(1)
    expect(named(since, 'database reachable again')).toEqual([expect.objectContaining({ refusedRequests: 3, failedWork: {} })])
    expect(since.filter((line) => line.level >= ERROR)).toEqual([])
  })

  itPostgres('counts a commit that finds the database gone as a refused request, not an error', async () => {
    expect((await me()).statusCode).toBe(200)
    const mark = lines.length
    try {
      expectProblem(await app.inject({ method: 'POST', url: '/test/outage/commit', headers: staff.headers }), 503, 'SERVICE_UNAVAILABLE')
    } finally {
      proxy.thaw()
    }
    expect((await me()).statusCode).toBe(200)
    const since = linesSince(mark)
    expect(since.filter((line) => line.level >= WARN).map((line) => line.msg)).toEqual(['database unreachable'])
    expect(named(since, 'database reachable again')).toEqual([expect.objectContaining({ refusedRequests: 1 })])
    expect(JSON.stringify(since)).not.toContain('stack')
  })

  itPostgres('keeps the error line with its stack for a 5xx that is not the database', async () => {
    const mark = lines.length
    expectProblem(await app.inject({ method: 'GET', url: '/test/outage/bug' }), 500, 'INTERNAL_ERROR')
    const errors = linesSince(mark).filter((line) => line.level >= ERROR)
    expect(errors).toEqual([expect.objectContaining({ msg: 'request failed', err: expect.objectContaining({ stack: expect.stringContaining('a bug, not an outage') }) })])
    expect(named(linesSince(mark), 'database unreachable')).toEqual([])
  })
})
