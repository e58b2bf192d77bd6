import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { AppError, ERROR_CATALOG, problemType } from '../../lib/errors.js'
import { useTestApp } from '../support/helper.js'

describe('problem+json rendering', () => {

  const app = useTestApp({ extend: async (test) => {
      const body = Type.Object({ name: Type.String({ maxLength: 10 }), count: Type.Integer() }, { additionalProperties: false })
      test.post('/test/echo', { config: { access: 'public' }, schema: { body } }, async (request) => request.body)
      test.get('/test/catalog', { config: { access: 'public' } }, async () => {
        throw new AppError('AUTH_018', undefined, { headers: { 'retry-after': '60' } })
      })
      test.get('/test/items/:id', { config: { access: 'public' } }, async () => ({ ok: true }))
      test.post('/test/store-name', { config: { access: 'public' }, schema: { body: Type.Object({ name: Type.String() }) } }, async (request) => {
        const { sql } = await import('kysely')
        await sql`select ${(request.body as { name: string }).name}::text as name`.execute(test.db)
        return { ok: true }
      })
      test.get('/test/crash', { config: { access: 'public' } }, async () => {
        throw new Error('select * from secrets where password = hunter2')
      })
    } })

  const expectProblem = (response: Awaited<ReturnType<FastifyInstance['inject']>>, status: number, code: string) => {
    expect(response.statusCode).toBe(status)
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
    const problem = response.json()
    expect(problem).toMatchObject({ type: problemType(code as never), status, code })
    expect(typeof problem.title).toBe('string')
    expect(typeof problem.detail).toBe('string')
    return problem
  }

  it('renders a thrown catalog error with its status, title and headers', async () => {
    const response = await app.current.inject({ method: 'GET', url: '/test/catalog' })
    const problem = expectProblem(response, 429, 'AUTH_018')
    expect(problem.title).toBe(ERROR_CATALOG.AUTH_018[1])
    expect(response.headers['retry-after']).toBe('60')
  })

  it('marks every answer, errors included, as not cacheable', async () => {
    for (const url of ['/test/catalog', '/actuator/health', '/v1/nothing-here']) {
      expect((await app.current.inject({ method: 'GET', url })).headers['cache-control']).toBe('no-store')
    }
  })

  it('builds the type URN from the code', () => {
    expect(problemType('AUTH_017')).toBe('urn:svc:error:auth-017')
    expect(problemType('SENDER_SETTING_NOT_APPROVED')).toBe('urn:svc:error:sender-setting-not-approved')
  })

  it('maps schema failures to VALIDATION_FAILED with errors[]', async () => {
    const wrongType = await app.current.inject({ method: 'POST', url: '/test/echo', payload: { name: 'ok', count: 'many' } })
    expect(expectProblem(wrongType, 400, 'VALIDATION_FAILED').errors).toEqual([{ field: 'body.count', message: 'must be integer' }])
    const missing = await app.current.inject({ method: 'POST', url: '/test/echo', payload: { name: 'ok' } })
    expect(expectProblem(missing, 400, 'VALIDATION_FAILED').errors[0].field).toBe('body.count')
    const extra = await app.current.inject({ method: 'POST', url: '/test/echo', payload: { name: 'ok', count: 1, admin: true } })
    expect(expectProblem(extra, 400, 'VALIDATION_FAILED').errors).toEqual([{ field: 'body.admin', message: 'is not an allowed property' }])
    const huge = await app.current.inject({ method: 'POST', url: '/test/echo', payload: { name: 'x'.repeat(50_000), count: 1 } })
    expectProblem(huge, 400, 'VALIDATION_FAILED')
  })

  it('answers malformed JSON with 400', async () => {
    const response = await app.current.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload: '{"name": "x",' })
    expect(expectProblem(response, 400, 'VALIDATION_FAILED').detail).toMatch(/Malformed JSON/)
  })

  it('answers an empty JSON body and a non-JSON content type with 4xx', async () => {
    const empty = await app.current.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload: '' })
    expectProblem(empty, 400, 'VALIDATION_FAILED')
    const text = await app.current.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'text/plain' }, payload: 'hello' })
    expectProblem(text, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it('answers a body over the limit with 413', async () => {
    const response = await app.current.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(5 * 1024 * 1024), count: 1 }),
    })
    expectProblem(response, 413, 'PAYLOAD_TOO_LARGE')
  })

  it('answers unknown routes, social-login paths included, with NOT_FOUND', async () => {
    for (const url of ['/v1/nothing-here', '/v1/oauth2/authorization/google', '/v1/oauth2/callback?code=x']) {
      expectProblem(await app.current.inject({ method: 'GET', url }), 404, 'NOT_FOUND')
    }
  })

  it('answers router-level rejections (over-long path parameter, malformed URL) with problem+json 400', async () => {
    expectProblem(await app.current.inject({ method: 'GET', url: `/test/items/${'9'.repeat(150)}` }), 400, 'VALIDATION_FAILED')
    expectProblem(await app.current.inject({ method: 'GET', url: '/test/items/%E0%A4%A' }), 400, 'VALIDATION_FAILED')
  })

  it('answers 400 when PostgreSQL refuses a value the schema let through (a NUL byte)', async () => {
    const response = await app.current.inject({ method: 'POST', url: '/test/store-name', payload: { name: 'nul\u0000here' } })
    expectProblem(response, 400, 'VALIDATION_FAILED')
  })

  it('hides unexpected errors behind INTERNAL_ERROR', async () => {
    const response = await app.current.inject({ method: 'GET', url: '/test/crash' })
    const problem = expectProblem(response, 500, 'INTERNAL_ERROR')
    expect(problem.detail).toBe(ERROR_CATALOG.INTERNAL_ERROR[2])
    expect(response.body).not.toMatch(/secrets|hunter2|at .*\.ts/)
  })
})
