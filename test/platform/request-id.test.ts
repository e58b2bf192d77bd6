import { describe, expect, it } from 'vitest'
import { registerOwner } from '../support/auth-fixtures.js'
import { AppError } from '../../lib/errors.js'
import { useTestApp } from '../support/helper.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('X-Request-Id', () => {
  const lines: Array<Record<string, unknown>> = []
  const app = useTestApp({
    env: { LOG_LEVEL: 'info' },
    onLine: (line) => lines.push(JSON.parse(line)),
    beforeReady: (service) => {
      // A subscriber that fails: its log line comes from after-commit work and must carry the request's id.
      service.events.subscribe('OwnerRegisteredEvent', () => {
        throw new Error('subscriber broke')
      })
    },
  })

  it('echoes an acceptable incoming id on the answer and on its log lines', async () => {
    const response = await app.current.inject({ method: 'GET', url: '/v1/me', headers: { 'x-request-id': 'edge-7f3a:b2' } })
    expect(response.headers['x-request-id']).toBe('edge-7f3a:b2')
    expect(lines.some((line) => line.reqId === 'edge-7f3a:b2')).toBe(true)
  })

  it('replaces an id that is empty, too long or not visible ASCII with a random UUID', async () => {
    for (const presented of ['', 'x'.repeat(129), 'has space', 'naïve', 'tab\tin']) {
      const response = await app.current.inject({ method: 'GET', url: '/actuator/health/liveness', headers: { 'x-request-id': presented } })
      expect(response.headers['x-request-id']).toMatch(UUID)
    }
    const generated = await app.current.inject({ method: 'GET', url: '/actuator/health/liveness' })
    expect(generated.headers['x-request-id']).toMatch(UUID)
  })

  it('is in the header and the body of problem answers', async () => {
    for (const request of [
      { method: 'GET' as const, url: '/v1/me' },
      { method: 'GET' as const, url: '/no/such/path' },
      { method: 'POST' as const, url: '/v1/login', payload: { nope: true } },
    ]) {
      const response = await app.current.inject({ ...request, headers: { 'x-request-id': 'problem-trace-1' } })
      expect(response.statusCode).toBeGreaterThanOrEqual(400)
      expect(response.headers['x-request-id']).toBe('problem-trace-1')
      expect(response.json().requestId).toBe('problem-trace-1')
    }
  })

  it('is on the log lines of work the request caused after its commit', async () => {
    const owner = await registerOwner(app.current, {}, { headers: { 'x-request-id': 'after-commit-trace' } })
    expect(owner.response.statusCode).toBe(201)
    await expect
      .poll(() => lines.some((line) => line.msg === 'event subscriber failed' && line.reqId === 'after-commit-trace'))
      .toBe(true)
  })
})

describe('X-Request-Id on a problem rewritten at rollback', () => {
  // A handler that fails before sending a statement: the token's revocation check travels with the rollback, and
  // plugins/platform/tenant-tx.ts rewrites the answer there.
  const app = useTestApp({
    extend: async (extra) => {
      extra.get('/v1/test-fails-first', { config: { access: 'user' } }, async () => {
        throw new AppError('NOT_FOUND')
      })
    },
  })

  it('carries the id in the rewritten body', async () => {
    const owner = await registerOwner(app.current)
    await app.current.inject({ method: 'POST', url: '/v1/logout', headers: owner.bearer })
    const response = await app.current.inject({ method: 'GET', url: '/v1/test-fails-first', headers: { ...owner.bearer, 'x-request-id': 'revoked-trace' } })
    expect(response.statusCode).toBe(401)
    expect(response.headers['x-request-id']).toBe('revoked-trace')
    expect(response.json()).toMatchObject({ requestId: 'revoked-trace' })
  })
})
