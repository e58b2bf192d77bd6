import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, owner, unique } from '../support/fixtures.js'
import { reserveDailyRecipients } from '../../db/repos/sms/sms-quota.js'
import { buildAppWith, itPostgres } from '../support/helper.js'
import { actor } from '../support/staff-fixtures.js'

describe('tenant transaction plugin', () => {
  let app: FastifyInstance
  const events: string[] = []
  const errorsLogged: string[] = []
  const watched = Symbol('errorsWatched')

  beforeAll(async () => {
    app = await buildAppWith(async (test) => {
      // Runs after the auth plugin: a request may drop the tenant the token gave it, as a faulty plugin would.
      test.addHook('onRequest', async (request) => {
        if (request.headers['x-test-drop-tenant'] !== undefined) request.tenantId = null
        // What requests log at error level, by message (a request's logger may be shared: wrapped once).
        const log = request.log as typeof request.log & { [watched]?: true }
        if (log[watched]) return
        const logError = log.error.bind(log)
        log.error = ((...args: Parameters<typeof logError>) => {
          errorsLogged.push(String(args.find((arg) => typeof arg === 'string') ?? ''))
          return logError(...args)
        }) as typeof log.error
        log[watched] = true
      })
      const body = Type.Object({ loginId: Type.String(), fail: Type.Optional(Type.Boolean()) })
      test.post('/test/users', { config: { access: 'user' }, schema: { body } }, async (request, reply) => {
        const { loginId, fail } = request.body as { loginId: string; fail?: boolean }
        await request.db
          .insertInto('users')
          .values({ tenantId: request.tenantId!, userLoginId: loginId, passwordHash: 'x', name: 'n', role: 'STUDENT', avatarSeed: 's', updatedAt: new Date() })
          .execute()
        request.afterCommit(async () => {
          const row = await owner().selectFrom('users').select('id').where('userLoginId', '=', loginId).executeTakeFirst()
          events.push(`${loginId}:${row ? 'visible' : 'missing'}`)
        })
        if (fail) throw new Error('boom after insert')
        return reply.code(201).send({ ok: true })
      })
      test.post('/test/slow-users', { config: { access: 'user' }, schema: { body } }, async (request) => {
        const { loginId } = request.body as { loginId: string }
        await request.db
          .insertInto('users')
          .values({ tenantId: request.tenantId!, userLoginId: loginId, passwordHash: 'x', name: 'n', role: 'STUDENT', avatarSeed: 's', updatedAt: new Date() })
          .execute()
        events.push(`${loginId}:inserted`)
        await new Promise((resolve) => setTimeout(resolve, 300))
        return { ok: true }
      })
      // A refusal that travels with the commit: a quota reservation that cannot fit, held for the commit.
      test.post('/test/refused-at-commit', { config: { access: 'user' }, schema: { body } }, async (request, reply) => {
        const { loginId } = request.body as { loginId: string }
        await request.db
          .insertInto('users')
          .values({ tenantId: request.tenantId!, userLoginId: loginId, passwordHash: 'x', name: 'n', role: 'STUDENT', avatarSeed: 's', updatedAt: new Date() })
          .execute()
        await reserveDailyRecipients(request.db, request.tenantId!, 3, { limit: 1, timeZone: 'UTC' })
        return reply.code(201).send({ ok: true })
      })
      test.get('/test/no-tenant-route', { config: { access: 'public' } }, async (request) => {
        return { tenant: request.db ? 'unexpected' : 'none' }
      })
      // The route's access alone decides whether a transaction opens.
      const transactionState = async (request: FastifyRequest) => {
        try {
          await request.db.selectFrom('users').select('id').limit(1).execute()
          return { transaction: 'open' }
        } catch {
          return { transaction: 'none' }
        }
      }
      test.get('/test/user-route', { config: { access: 'user' } }, transactionState)
      test.get('/test/staff-route', { config: { access: 'staff' } }, transactionState)
      test.get('/test/public-route', { config: { access: 'public' } }, transactionState)
      test.post('/test/refresh-cookie-route', { config: { access: 'refresh-cookie' } }, transactionState)
    })
  })
  afterAll(() => app.close())

  const studentOf = async (tenant: Parameters<typeof actor>[1]) => (await actor(app, tenant, 'STUDENT')).headers

  const exists = async (loginId: string) =>
    Boolean(await owner().selectFrom('users').select('id').where('userLoginId', '=', loginId).executeTakeFirst())

  const until = async (check: () => boolean, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > deadline) throw new Error('condition not met before the deadline')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  it('commits on success and runs after-commit work once the data is visible', async () => {
    const tenant = await createTenant()
    const loginId = unique('commit')
    const response = await app.inject({ method: 'POST', url: '/test/users', headers: await studentOf(tenant), payload: { loginId } })
    expect(response.statusCode).toBe(201)
    expect(await exists(loginId)).toBe(true)
    await until(() => events.includes(`${loginId}:visible`))
  })

  it('rolls back on error and never runs after-commit work', async () => {
    const tenant = await createTenant()
    const loginId = unique('rollback')
    const response = await app.inject({ method: 'POST', url: '/test/users', headers: await studentOf(tenant), payload: { loginId, fail: true } })
    expect(response.statusCode).toBe(500)
    expect(response.json()).toMatchObject({ code: 'INTERNAL_ERROR', detail: 'An unexpected error occurred.' })
    expect(response.body).not.toContain('boom')
    expect(await exists(loginId)).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(events.some((event) => event.startsWith(loginId))).toBe(false)
  })

  it('rolls back when the client aborts mid-request', async () => {
    const tenant = await createTenant()
    const loginId = unique('abort')
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const controller = new AbortController()
    const pending = fetch(`${address}/test/slow-users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await studentOf(tenant)) },
      body: JSON.stringify({ loginId }),
      signal: controller.signal,
    }).catch(() => 'aborted')
    await until(() => events.includes(`${loginId}:inserted`))
    controller.abort()
    expect(await pending).toBe('aborted')
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(await exists(loginId)).toBe(false)
  })

  itPostgres('answers a refusal that the commit carried with its catalog problem, keeps nothing, and logs no error', async () => {
    const tenant = await createTenant()
    const loginId = unique('refused')
    errorsLogged.length = 0
    const response = await app.inject({ method: 'POST', url: '/test/refused-at-commit', headers: await studentOf(tenant), payload: { loginId } })
    expect(response.statusCode).toBe(429)
    expect(response.json()).toMatchObject({ code: 'SMS_QUOTA_EXCEEDED' })
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0)
    expect(await exists(loginId)).toBe(false)
    // An answer to the client, not a fault of the service: the log at error level stays for faults.
    expect(errorsLogged).toEqual([])
  })

  it('fails closed before any data access when the route has no tenant context', async () => {
    const loginId = unique('nocontext')
    const { headers } = await actor(app, await createTenant(), 'STUDENT')
    const response = await app.inject({ method: 'POST', url: '/test/users', headers: { ...headers, 'x-test-drop-tenant': '1' }, payload: { loginId } })
    expect(response.statusCode).toBe(500)
    expect(await exists(loginId)).toBe(false)
  })

  it('throws when a handler uses request.db on a route without a tenant transaction', async () => {
    const response = await app.inject({ method: 'GET', url: '/test/no-tenant-route' })
    expect(response.statusCode).toBe(500)
    expect(response.json().code).toBe('INTERNAL_ERROR')
  })

  it('rejects invalid input before the handler runs', async () => {
    const tenant = await createTenant()
    const response = await app.inject({ method: 'POST', url: '/test/users', headers: await studentOf(tenant), payload: { loginId: 5 } })
    expect(response.statusCode).toBe(400)
    expect(response.json().code).toBe('VALIDATION_FAILED')
  })

  it('opens a transaction for the routes whose access names a tenant, and none for the others', async () => {
    const { headers } = await actor(app, await createTenant(), 'OWNER')
    const state = async (method: 'GET' | 'POST', url: string, auth?: { authorization: string }) =>
      (await app.inject({ method, url, headers: auth })).json()
    expect(await state('GET', '/test/user-route', headers)).toEqual({ transaction: 'open' })
    expect(await state('GET', '/test/staff-route', headers)).toEqual({ transaction: 'open' })
    expect(await state('GET', '/test/public-route', headers)).toEqual({ transaction: 'none' })
    expect(await state('POST', '/test/refresh-cookie-route', headers)).toEqual({ transaction: 'none' })
  })
})
