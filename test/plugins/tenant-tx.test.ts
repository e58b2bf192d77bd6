import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, owner, unique } from '../fixtures.js'
import { reserveDailyRecipients } from '../../db/repos/sms-quota.js'
import { buildAppWith, itPostgres } from '../helper.js'
import { actor } from '../staff-fixtures.js'

describe('tenant transaction plugin', () => {
  let app: FastifyInstance
  const events: string[] = []
  const errorsLogged: string[] = []
  const watched = Symbol('errorsWatched')

  beforeAll(async () => {
    app = await buildAppWith(async (test) => {
      // Stands in for the auth plugin: takes the tenant from a header.
      test.addHook('onRequest', async (request) => {
        const header = request.headers['x-test-tenant']
        if (typeof header === 'string') request.tenantId = Number(header)
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
      test.post('/test/users', { config: { auth: false, tenant: true }, schema: { body } }, async (request, reply) => {
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
      test.post('/test/slow-users', { config: { auth: false, tenant: true }, schema: { body } }, async (request) => {
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
      test.post('/test/refused-at-commit', { config: { auth: false, tenant: true }, schema: { body } }, async (request, reply) => {
        const { loginId } = request.body as { loginId: string }
        await request.db
          .insertInto('users')
          .values({ tenantId: request.tenantId!, userLoginId: loginId, passwordHash: 'x', name: 'n', role: 'STUDENT', avatarSeed: 's', updatedAt: new Date() })
          .execute()
        await reserveDailyRecipients(request.db, request.tenantId!, 3, 1)
        return reply.code(201).send({ ok: true })
      })
      test.get('/test/no-tenant-route', { config: { auth: false } }, async (request) => {
        return { tenant: request.db ? 'unexpected' : 'none' }
      })
      // Neither declares `tenant`: the plugin's default decides.
      const transactionState = async (request: FastifyRequest) => {
        const tenant = request.routeOptions.config.tenant
        try {
          await request.db.selectFrom('users').select('id').limit(1).execute()
          return { tenant, transaction: 'open' }
        } catch {
          return { tenant, transaction: 'none' }
        }
      }
      test.get('/test/authenticated-default', transactionState)
      test.get('/test/public-default', { config: { auth: false } }, transactionState)
      test.get('/test/authenticated-opt-out', { config: { tenant: false } }, transactionState)
    })
  })
  afterAll(() => app.close())

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
    const response = await app.inject({ method: 'POST', url: '/test/users', headers: { 'x-test-tenant': String(tenant.id) }, payload: { loginId } })
    expect(response.statusCode).toBe(201)
    expect(await exists(loginId)).toBe(true)
    await until(() => events.includes(`${loginId}:visible`))
  })

  it('rolls back on error and never runs after-commit work', async () => {
    const tenant = await createTenant()
    const loginId = unique('rollback')
    const response = await app.inject({ method: 'POST', url: '/test/users', headers: { 'x-test-tenant': String(tenant.id) }, payload: { loginId, fail: true } })
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
      headers: { 'content-type': 'application/json', 'x-test-tenant': String(tenant.id) },
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
    const response = await app.inject({ method: 'POST', url: '/test/refused-at-commit', headers: { 'x-test-tenant': String(tenant.id) }, payload: { loginId } })
    expect(response.statusCode).toBe(429)
    expect(response.json()).toMatchObject({ code: 'SMS_QUOTA_EXCEEDED' })
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0)
    expect(await exists(loginId)).toBe(false)
    // An answer to the client, not a fault of the service: the log at error level stays for faults.
    expect(errorsLogged).toEqual([])
  })

  it('fails closed before any data access when the route has no tenant context', async () => {
    const loginId = unique('nocontext')
    const response = await app.inject({ method: 'POST', url: '/test/users', payload: { loginId } })
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
    const response = await app.inject({ method: 'POST', url: '/test/users', headers: { 'x-test-tenant': String(tenant.id) }, payload: { loginId: 5 } })
    expect(response.statusCode).toBe(400)
    expect(response.json().code).toBe('VALIDATION_FAILED')
  })

  it('opens a transaction for every authenticated route by default, none for a public one, and lets a route opt out', async () => {
    const { headers } = await actor(app, await createTenant(), 'OWNER')
    const state = async (url: string, auth?: { authorization: string }) => (await app.inject({ method: 'GET', url, headers: auth })).json()
    expect(await state('/test/authenticated-default', headers)).toEqual({ tenant: true, transaction: 'open' })
    expect(await state('/test/public-default')).toEqual({ tenant: false, transaction: 'none' })
    expect(await state('/test/authenticated-opt-out', headers)).toEqual({ tenant: false, transaction: 'none' })
  })
})
