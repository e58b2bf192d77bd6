import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import lightMyRequest from 'light-my-request'
import pg from 'pg'
import { describe, expect, it, vi } from 'vitest'
import { openPostgres } from '../../db/database.js'
import { MAX_PREPARED_PER_CONNECTION } from '../../db/driver/statement-cache.js'
import { buildService } from '../../build.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { buildAppWith, buildTestApp, itPostgres, testEnv, useTestApp } from '../support/helper.js'
import { connectionOf, sessionQuery } from '../support/statement-recorder.js'

const get = (app: FastifyInstance, url: string) => app.inject({ method: 'GET', url })

describe('GET /actuator/health', () => {
  const app = useTestApp()

  it('answers UP when the database answers', async () => {
    const response = await get(app.current, '/actuator/health')
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ status: 'UP' })
  })

  it('answers 503 DOWN when the database does not', async () => {
    const down = await buildTestApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' })
    try {
      const response = await get(down, '/actuator/health')
      expect(response.statusCode).toBe(503)
      expect(response.json()).toEqual({ status: 'DOWN' })
    } finally {
      await down.close()
    }
  })
})

describe('GET /actuator/health/liveness and /actuator/health/readiness', () => {
  const app = useTestApp()

  it('answers UP on both while the database answers', async () => {
    expect((await get(app.current, '/actuator/health/liveness')).json()).toEqual({ status: 'UP' })
    const ready = await get(app.current, '/actuator/health/readiness')
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({ status: 'UP' })
  })

  itPostgres('keeps liveness UP without touching the database, while readiness is DOWN', async () => {
    const down = await buildTestApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere', SVC_DB_CONNECT_TIMEOUT_MS: '300' })
    const connect = vi.spyOn(pg.Client.prototype, 'connect')
    try {
      const live = await get(down, '/actuator/health/liveness')
      expect({ status: live.statusCode, body: live.json() }).toEqual({ status: 200, body: { status: 'UP' } })
      expect(connect).not.toHaveBeenCalled()
      const ready = await get(down, '/actuator/health/readiness')
      expect({ status: ready.statusCode, body: ready.json() }).toEqual({ status: 503, body: { status: 'DOWN' } })
    } finally {
      vi.restoreAllMocks()
      await down.close()
    }
  })

  it('answers readiness DOWN and other requests 503 SERVICE_UNAVAILABLE once closing has begun; liveness stays UP', async () => {
    const during: Record<string, { status: number; body: unknown; headers: Record<string, unknown> }> = {}
    const closing = await buildAppWith(async (instance) => {
      // Runs after the closing plugin's own preClose hook, while the instance is closing: requests go to the
      // server's handler as a keep-alive connection's next request would (app.inject refuses a closing instance).
      instance.addHook('preClose', async () => {
        const handler = (request: unknown, reply: unknown) => instance.server.emit('request', request, reply)
        for (const url of ['/actuator/health/readiness', '/actuator/health/liveness', '/v1/me']) {
          const response = await lightMyRequest(handler, { method: 'GET', url })
          during[url] = { status: response.statusCode, body: response.json(), headers: response.headers }
        }
      })
    })
    expect((await get(closing, '/actuator/health/readiness')).statusCode).toBe(200)
    await closing.close()
    expect(during['/actuator/health/readiness']).toMatchObject({ status: 503, body: { status: 'DOWN' } })
    expect(during['/actuator/health/liveness']).toMatchObject({ status: 200, body: { status: 'UP' } })
    expect(during['/v1/me']).toMatchObject({
      status: 503,
      body: { code: 'SERVICE_UNAVAILABLE' },
      headers: { 'retry-after': '1', 'content-type': expect.stringMatching(/^application\/problem\+json/), connection: 'close' },
    })
  })

  // The pooler fault of a transaction pooler that does not track prepared statements (PgBouncer 1.18 with
  // SVC_DB_PREPARED_STATEMENTS=true), played on one connection: the server already holds a statement under the
  // name the client gives its next one, as when another client prepared it on that server connection.
  itPostgres('goes DOWN when the request path meets statements prepared by another session, and answers those requests 503', async () => {
    const env = testEnv()
    const database = openPostgres(env.DATABASE_URL!, 1)
    const mixed = await buildService(env, database)
    try {
      const session = await connectionOf(() => sql`select 1`.execute(database.db))
      // The connection has named what it prepared so far svc_0, svc_1, ...; every later name is taken, not only the
      // next few: the app's own jobs (the minute purge and roll-up, the retention purge) share this only connection,
      // may run at any moment and each move the client on by a name. One may even prepare a name between the
      // count and the take: that name is then the job's own, not a trap, and the next one still is.
      const prepared = Object.keys((session as unknown as { connection: { parsedStatements: object } }).connection.parsedStatements)
      for (let next = prepared.length; next < MAX_PREPARED_PER_CONNECTION; next++) {
        await sessionQuery(session, `prepare svc_${next} as select 1`).catch((error: { code?: string }) => {
          if (error.code !== '42P05') throw error
        })
      }

      const login = await mixed.inject({ method: 'POST', url: '/v1/login', payload: { userLoginId: 'x', password: 'Wrong-password-1', customId: 'y' } })
      expectProblem(login, 503, 'SERVICE_UNAVAILABLE')
      const ready = await get(mixed, '/actuator/health/readiness')
      expect({ status: ready.statusCode, body: ready.json() }).toEqual({ status: 503, body: { status: 'DOWN' } })
      expect((await get(mixed, '/actuator/health/liveness')).statusCode).toBe(200)
    } finally {
      vi.restoreAllMocks()
      await mixed.close()
    }
  })

  it('documents both probes in the OpenAPI document', async () => {
    const document = (await get(app.current, '/openapi.json')).json() as { paths: Record<string, unknown> }
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/actuator/health/liveness', '/actuator/health/readiness']))
  })
})
