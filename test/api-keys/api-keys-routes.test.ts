import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { storedAuditEvents, theAuditEvent } from '../audit/audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { academy } from '../support/staff-fixtures.js'
import { issueKey, keyRow } from './api-key-fixtures.js'

describe('/v1/api-keys', () => {
  const app = useTestApp()

  describe('POST /v1/api-keys', () => {
    it('answers the key once and stores only its SHA-256', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      const response = await app.current.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: boss.headers,
        payload: { name: 'enrolment server', scopes: ['sms:send', 'sms:read'] },
      })
      expect(response.statusCode).toBe(201)
      const body = response.json()
      expect(body).toEqual({
        id: expect.any(Number),
        name: 'enrolment server',
        scopes: ['sms:send', 'sms:read'],
        prefix: body.key.slice(0, 13),
        key: expect.stringMatching(/^svck_[A-Za-z0-9_-]{43}$/),
        createdAt: expect.any(String),
        expiresAt: null,
        lastUsedAt: null,
      })
      const row = await keyRow(body.id)
      expect(row.tenantId).toBe(tenant.id)
      expect(row.createdBy).toBe(boss.user.id)
      expect(Buffer.compare(row.keyHash, createHash('sha256').update(body.key).digest())).toBe(0)
      // Nowhere in the row, nor in the directory, in clear.
      expect(JSON.stringify(row)).not.toContain(body.key.slice(5))
      const directory = await owner().selectFrom('apiKeyDirectory').selectAll().where('apiKeyId', '=', body.id).execute()
      expect(directory).toEqual([{ lookupId: row.lookupId, tenantId: tenant.id, apiKeyId: body.id }])
      expect(JSON.stringify(directory)).not.toContain(body.key.slice(5))

      const event = await theAuditEvent(tenant, 'API_KEY_CREATED')
      expect(event).toMatchObject({ actorId: boss.user.id, targetType: 'API_KEY', targetId: String(body.id) })
      expect(event.details).toEqual({ name: 'enrolment server', scopes: ['sms:send', 'sms:read'], prefix: body.prefix })
    })

    it('keeps an expiry, and refuses one in the past', async () => {
      const { owner: boss } = await academy(app.current)
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
      const created = await app.current.inject({ method: 'POST', url: '/v1/api-keys', headers: boss.headers, payload: { name: 'n', scopes: ['usage:read'], expiresAt } })
      expect(created.json().expiresAt).toBe(expiresAt)
      const past = await app.current.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: boss.headers,
        payload: { name: 'n', scopes: ['usage:read'], expiresAt: '2020-01-01T00:00:00Z' },
      })
      expectProblem(past, 400, 'VALIDATION_FAILED')
    })

    it.each([
      ['no scopes', { name: 'n', scopes: [] }],
      ['an unknown scope', { name: 'n', scopes: ['sms:everything'] }],
      ['a repeated scope', { name: 'n', scopes: ['sms:read', 'sms:read'] }],
      ['a blank name', { name: '   ', scopes: ['sms:read'] }],
      ['a name too long', { name: 'x'.repeat(101), scopes: ['sms:read'] }],
      ['an unknown field', { name: 'n', scopes: ['sms:read'], role: 'OWNER' }],
      ['a malformed expiry', { name: 'n', scopes: ['sms:read'], expiresAt: 'tomorrow' }],
    ])('refuses %s with 400', async (_case, payload) => {
      const { owner: boss } = await academy(app.current)
      expectProblem(await app.current.inject({ method: 'POST', url: '/v1/api-keys', headers: boss.headers, payload }), 400, 'VALIDATION_FAILED')
    })

    it('is for the OWNER only', async () => {
      const { manager, instructor } = await academy(app.current)
      for (const who of [manager, instructor]) {
        const response = await app.current.inject({ method: 'POST', url: '/v1/api-keys', headers: who.headers, payload: { name: 'n', scopes: ['sms:read'] } })
        expectProblem(response, 403, 'AUTH_008')
      }
      expectProblem(await app.current.inject({ method: 'GET', url: '/v1/api-keys' }), 401, 'AUTH_002')
    })

    it('refuses a 21st live key (409 API_KEY_LIMIT); a revoked or expired one leaves room', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      const keys = []
      for (let i = 0; i < 20; i += 1) keys.push(await issueKey(app.current, boss, ['sms:read']))
      const refused = await app.current.inject({ method: 'POST', url: '/v1/api-keys', headers: boss.headers, payload: { name: 'n', scopes: ['sms:read'] } })
      expectProblem(refused, 409, 'API_KEY_LIMIT')
      await app.current.inject({ method: 'DELETE', url: `/v1/api-keys/${keys[0]!.id}`, headers: boss.headers })
      await issueKey(app.current, boss, ['sms:read'])
      await owner().updateTable('apiKeys').set({ expiresAt: new Date(Date.now() - 1000) }).where('id', '=', keys[1]!.id).execute()
      await issueKey(app.current, boss, ['sms:read'])
      expectProblem(
        await app.current.inject({ method: 'POST', url: '/v1/api-keys', headers: boss.headers, payload: { name: 'n', scopes: ['sms:read'] } }),
        409,
        'API_KEY_LIMIT',
      )
      expect((await storedAuditEvents(tenant, 'API_KEY_CREATED')).length).toBe(22)
    })

    it('refuses 20 concurrent creations beyond the limit (never 21 live keys)', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      for (let i = 0; i < 15; i += 1) await issueKey(app.current, boss, ['sms:read'])
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          app.current.inject({ method: 'POST', url: '/v1/api-keys', headers: boss.headers, payload: { name: 'n', scopes: ['sms:read'] } }),
        ),
      )
      expect(answers.filter((answer) => answer.statusCode === 201)).toHaveLength(5)
      const live = await owner().selectFrom('apiKeys').select('id').where('tenantId', '=', tenant.id).execute()
      expect(live).toHaveLength(20)
    })
  })

  describe('GET /v1/api-keys', () => {
    it("lists the tenant's keys that are not revoked, newest first, never the key", async () => {
      const { owner: boss } = await academy(app.current)
      const first = await issueKey(app.current, boss, ['sms:read'], { name: 'first' })
      const second = await issueKey(app.current, boss, ['usage:read'], { name: 'second' })
      const revoked = await issueKey(app.current, boss, ['usage:read'], { name: 'revoked' })
      await app.current.inject({ method: 'DELETE', url: `/v1/api-keys/${revoked.id}`, headers: boss.headers })
      const other = await academy(app.current)
      await issueKey(app.current, other.owner, ['sms:read'], { name: 'elsewhere' })

      const response = await app.current.inject({ method: 'GET', url: '/v1/api-keys', headers: boss.headers })
      expect(response.statusCode).toBe(200)
      const { items } = response.json()
      expect(items.map((item: { name: string }) => item.name)).toEqual(['second', 'first'])
      expect(items[1]).toEqual({
        id: first.id,
        name: 'first',
        scopes: ['sms:read'],
        prefix: first.prefix,
        createdAt: expect.any(String),
        expiresAt: null,
        lastUsedAt: null,
      })
      expect(response.body).not.toContain(first.key)
      expect(response.body).not.toContain(second.key)
    })
  })

  describe('DELETE /v1/api-keys/:id', () => {
    it('revokes the key (204), audited', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:read'], { name: 'old server' })
      const response = await app.current.inject({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, headers: boss.headers })
      expect(response.statusCode).toBe(204)
      expect((await keyRow(key.id)).revokedAt).toBeInstanceOf(Date)
      const event = await theAuditEvent(tenant, 'API_KEY_REVOKED')
      expect(event).toMatchObject({ actorId: boss.user.id, targetId: String(key.id), details: { name: 'old server' } })
      expectProblem(await app.current.inject({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, headers: boss.headers }), 404, 'API_KEY_NOT_FOUND')
    })

    it("answers 404 for another tenant's key and leaves it alive", async () => {
      const a = await academy(app.current)
      const b = await academy(app.current)
      const key = await issueKey(app.current, b.owner, ['sms:read'])
      expectProblem(await app.current.inject({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, headers: a.owner.headers }), 404, 'API_KEY_NOT_FOUND')
      expect((await keyRow(key.id)).revokedAt).toBeNull()
    })

    it('refuses a malformed id (400) and a non-owner (403)', async () => {
      const { owner: boss, manager } = await academy(app.current)
      expectProblem(await app.current.inject({ method: 'DELETE', url: '/v1/api-keys/0x10', headers: boss.headers }), 400, 'VALIDATION_FAILED')
      expectProblem(await app.current.inject({ method: 'DELETE', url: '/v1/api-keys/1', headers: manager.headers }), 403, 'AUTH_008')
    })
  })
})
