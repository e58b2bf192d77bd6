import type { FastifyInstance, RouteOptions } from 'fastify'
import { resolveAccess } from '../../lib/http/access.js'
import { describe, expect, it } from 'vitest'
import { storedAuditEvents } from '../audit/audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { createTenant, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { newKey, phones, recipients } from '../support/sms-send-fixtures.js'
import { academy, actor, type Actor } from '../support/staff-fixtures.js'
import { issueKey, keyRow, withKey, type IssuedKey } from './api-key-fixtures.js'

const ALL_SCOPES = ['sms:send', 'sms:read', 'templates:write', 'opt-outs:write', 'usage:read'] as const

const sendBody = (count = 2) => ({ title: 'Notice', content: 'Hello {name}', recipients: recipients(count) })

function sendWith(app: FastifyInstance, key: IssuedKey, headers: Record<string, string> = {}) {
  return withKey(app, key, 'POST', '/v1/sms/send', sendBody(), { 'idempotency-key': newKey(), ...headers })
}

describe('requests with an API key', () => {
  const app = useTestApp()
  // Another instance of the service on the same database: what one revokes, the other must refuse.
  const other = useTestApp()

  describe('within its scopes', () => {
    it('sends and reads as its creator, in its tenant', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:send', 'sms:read'])
      const sent = await sendWith(app.current, key)
      expect(sent.statusCode).toBe(201)
      const message = sent.json<{ id: number }>()
      const stored = await owner().selectFrom('smsMessages').select(['tenantId', 'senderId']).where('id', '=', message.id).executeTakeFirstOrThrow()
      expect(stored).toEqual({ tenantId: tenant.id, senderId: boss.user.id })

      const history = await withKey(app.current, key, 'GET', '/v1/sms/history')
      expect(history.statusCode).toBe(200)
      expect(history.body).toContain(`"id":${message.id}`)
      expect((await withKey(app.current, key, 'GET', `/v1/sms/history/${message.id}`)).statusCode).toBe(200)
    })

    it('carries details.apiKeyId on every audit event the key causes, and none on the others', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, [...ALL_SCOPES])
      expect((await sendWith(app.current, key)).statusCode).toBe(201)
      expect((await withKey(app.current, key, 'POST', '/v1/sms/opt-outs', { phone: phones(1)[0] })).statusCode).toBe(201)
      const template = await withKey(app.current, key, 'POST', '/v1/sms-templates', { name: 'T', content: 'Hi {name}', category: 'GENERAL' })
      expect(template.statusCode).toBe(201)
      const events = await storedAuditEvents(tenant)
      const byKey = events.filter((event) => ['SMS_ACCEPTED', 'OPT_OUT_ADDED', 'TEMPLATE_CREATED'].includes(event.type))
      expect(byKey.map((event) => event.type).sort()).toEqual(['OPT_OUT_ADDED', 'SMS_ACCEPTED', 'TEMPLATE_CREATED'])
      for (const event of byKey) {
        expect(event.details).toMatchObject({ apiKeyId: key.id })
        expect(event.actorId).toBe(boss.user.id)
      }
      // The key's own creation was the owner's, by access token.
      const created = events.find((event) => event.type === 'API_KEY_CREATED')!
      expect(created.details).not.toHaveProperty('apiKeyId')
    })

    it('refuses a route of a scope the key lacks: a key without sms:send cannot send (403 API_KEY_SCOPE)', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      const reader = await issueKey(app.current, boss, ['sms:read', 'usage:read', 'templates:write', 'opt-outs:write'])
      expectProblem(await sendWith(app.current, reader), 403, 'API_KEY_SCOPE')
      expect(await owner().selectFrom('smsMessages').select('id').where('tenantId', '=', tenant.id).execute()).toEqual([])
      const sender = await issueKey(app.current, boss, ['sms:send'])
      expectProblem(await withKey(app.current, sender, 'GET', '/v1/sms/history'), 403, 'API_KEY_SCOPE')
      expectProblem(await withKey(app.current, sender, 'GET', '/v1/sms/usage?from=2026-11-01&to=2026-11-02'), 403, 'API_KEY_SCOPE')
    })

    it('records and withdraws an advertising consent under opt-outs:write, audited with the key, and refuses it to a key without that scope', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['opt-outs:write'])
      const phone = phones(1, 700)[0]!
      const consent = { phone, source: 'ONLINE', evidence: 'Enrolment form checkbox, 2026-11-29' }
      expect((await withKey(app.current, key, 'POST', '/v1/sms/ad-consents', consent)).statusCode).toBe(201)
      expect((await withKey(app.current, key, 'GET', '/v1/sms/ad-consents')).statusCode).toBe(200)
      const reader = await issueKey(app.current, boss, ['sms:read'])
      expectProblem(await withKey(app.current, reader, 'DELETE', `/v1/sms/ad-consents/${phone}`), 403, 'API_KEY_SCOPE')
      expect((await withKey(app.current, key, 'DELETE', `/v1/sms/ad-consents/${phone}`)).statusCode).toBe(204)
      const events = (await storedAuditEvents(tenant)).filter((event) => event.type.startsWith('AD_CONSENT_'))
      expect(events.map((event) => [event.type, event.details.apiKeyId])).toEqual(
        expect.arrayContaining([['AD_CONSENT_ADDED', key.id], ['AD_CONSENT_WITHDRAWN', key.id]]),
      )
      expect(events).toHaveLength(2)
    })

    it('works for a creator demoted from OWNER to MANAGER', async () => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:read'])
      expect((await withKey(app.current, key, 'GET', '/v1/sms/history')).statusCode).toBe(200)
      await owner().updateTable('users').set({ role: 'MANAGER' }).where('id', '=', boss.user.id).execute()
      expect((await withKey(app.current, key, 'GET', '/v1/sms/history')).statusCode).toBe(200)
    })
  })

  describe('refused keys', () => {
    it('refuses a revoked key on its next request, on another instance too (401 AUTH_003)', async () => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:read'])
      // Both instances have seen the key work.
      expect((await withKey(app.current, key, 'GET', '/v1/sms/history')).statusCode).toBe(200)
      expect((await withKey(other.current, key, 'GET', '/v1/sms/history')).statusCode).toBe(200)
      expect((await app.current.inject({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, headers: boss.headers })).statusCode).toBe(204)
      expectProblem(await withKey(other.current, key, 'GET', '/v1/sms/history'), 401, 'AUTH_003')
      expectProblem(await withKey(app.current, key, 'GET', '/v1/sms/history'), 401, 'AUTH_003')
    })

    it('refuses an expired key (401 AUTH_003), whether the instance saw it alive or not', async () => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:read'], { expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
      expect((await withKey(app.current, key, 'GET', '/v1/sms/history')).statusCode).toBe(200)
      await owner().updateTable('apiKeys').set({ expiresAt: new Date(Date.now() - 1000) }).where('id', '=', key.id).execute()
      expectProblem(await withKey(app.current, key, 'GET', '/v1/sms/history'), 401, 'AUTH_003')
      expectProblem(await withKey(other.current, key, 'GET', '/v1/sms/history'), 401, 'AUTH_003')
    })

    it.each([
      ['suspended', { status: 'SUSPENDED' }],
      ['deleted', { status: 'DELETED' }],
      ['demoted to INSTRUCTOR', { role: 'INSTRUCTOR' }],
      ['demoted to STUDENT', { role: 'STUDENT' }],
    ] as const)('refuses the key of a creator %s (401 AUTH_003), and changes nothing', async (_case, change) => {
      const { tenant, owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:send', 'sms:read'])
      expect((await withKey(app.current, key, 'GET', '/v1/sms/history')).statusCode).toBe(200)
      await owner().updateTable('users').set(change).where('id', '=', boss.user.id).execute()
      expectProblem(await withKey(app.current, key, 'GET', '/v1/sms/history'), 401, 'AUTH_003')
      expectProblem(await sendWith(app.current, key), 401, 'AUTH_003')
      expect(await owner().selectFrom('smsMessages').select('id').where('tenantId', '=', tenant.id).execute()).toEqual([])
    })

    it('refuses the key of a suspended tenant (403 AUTH_010)', async () => {
      const { tenant, owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:read'])
      await owner().updateTable('tenants').set({ status: 'SUSPENDED' }).where('id', '=', tenant.id).execute()
      expectProblem(await withKey(app.current, key, 'GET', '/v1/sms/history'), 403, 'AUTH_010')
      expectProblem(await withKey(other.current, key, 'GET', '/v1/sms/history'), 403, 'AUTH_010')
    })

    it('answers an unknown key, a wrong key of a known lookup id and a malformed one alike (401 AUTH_003)', async () => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:read'])
      const wrong = { ...key, headers: { authorization: `Bearer ${key.key.slice(0, 21)}${'A'.repeat(27)}` } }
      const unknown = { ...key, headers: { authorization: `Bearer svck_${'B'.repeat(43)}` } }
      const malformed = { ...key, headers: { authorization: 'Bearer svck_short' } }
      const bodies = []
      for (const presented of [wrong, unknown, malformed]) {
        const response = await withKey(app.current, presented, 'GET', '/v1/sms/history')
        const problem = expectProblem(response, 401, 'AUTH_003')
        bodies.push({ ...problem, requestId: undefined, instance: undefined })
      }
      expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1)
    })

    it('never takes a key from the access cookie', async () => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:read'])
      const response = await app.current.inject({ method: 'GET', url: '/v1/sms/history', cookies: { svc_access_token: key.key } })
      expectProblem(response, 401, 'AUTH_003')
    })
  })

  describe('routes no key reaches', () => {
    it.each([
      ['GET', '/v1/me'],
      ['PATCH', '/v1/me', { name: 'Key' }],
      ['GET', '/v1/me/sessions'],
      ['DELETE', '/v1/me/sessions'],
      ['POST', '/v1/me/password', { currentPassword: 'x', newPassword: 'y' }],
      ['GET', '/v1/me/mfa'],
      ['POST', '/v1/logout'],
      ['POST', '/v1/logout-all'],
      ['GET', '/v1/api-keys'],
      ['POST', '/v1/api-keys', { name: 'n', scopes: ['sms:send'] }],
      ['DELETE', '/v1/api-keys/1'],
      ['GET', '/v1/audit-events'],
      ['GET', '/v1/webhook-endpoint'],
      ['PUT', '/v1/webhook-endpoint', { url: 'https://example.com/hook' }],
      ['GET', '/v1/sms/sender-setting'],
      ['PUT', '/v1/sms/advertising', {}],
      ['GET', '/v1/kakao/channel'],
    ] as const)('refuses a key with every scope on %s %s (403 API_KEY_SCOPE)', async (method, url, payload?: object) => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, [...ALL_SCOPES])
      expectProblem(await withKey(app.current, key, method, url, payload), 403, 'API_KEY_SCOPE')
    })

    it('opens no session: login and refresh ignore the key', async () => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, [...ALL_SCOPES])
      expectProblem(await withKey(app.current, key, 'POST', '/v1/refresh'), 401, 'AUTH_005')
      const sessions = await owner().selectFrom('sessions').select('sid').where('userId', '=', boss.user.id).execute()
      expect(sessions).toEqual([])
    })
  })

  describe('CSRF-looking headers', () => {
    it('change nothing: a key is no cookie', async () => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:send'])
      const plain = await sendWith(app.current, key)
      const crossSite = await sendWith(app.current, key, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
      expect([plain.statusCode, crossSite.statusCode]).toEqual([201, 201])
      // With a stray access cookie of another user too: the key wins, and the origin check still does not apply.
      const stranger: Actor = await actor(app.current, await createTenant(), 'OWNER')
      const withCookie = await app.current.inject({
        method: 'POST',
        url: '/v1/sms/send',
        headers: { ...key.headers, 'idempotency-key': newKey(), origin: 'https://evil.example' },
        cookies: { svc_access_token: stranger.headers.authorization.slice(7) },
        payload: sendBody(),
      })
      expect(withCookie.statusCode).toBe(201)
      const stored = await owner().selectFrom('smsMessages').select('tenantId').where('id', '=', withCookie.json().id).executeTakeFirstOrThrow()
      expect(stored.tenantId).toBe(boss.tenant.id)
    })
  })

  describe('lastUsedAt', () => {
    it('is set by a use and written at most once a minute', async () => {
      const { owner: boss } = await academy(app.current)
      const key = await issueKey(app.current, boss, ['sms:read'])
      expect((await keyRow(key.id)).lastUsedAt).toBeNull()
      await withKey(app.current, key, 'GET', '/v1/sms/history')
      await expect.poll(async () => (await keyRow(key.id)).lastUsedAt, { timeout: 5000 }).not.toBeNull()
      const first = (await keyRow(key.id)).lastUsedAt!
      for (let i = 0; i < 3; i += 1) await withKey(app.current, key, 'GET', '/v1/sms/history')
      // The other instance writes too, but the row refuses a second mark within the minute.
      await withKey(other.current, key, 'GET', '/v1/sms/history')
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect((await keyRow(key.id)).lastUsedAt).toEqual(first)
      const listed = await app.current.inject({ method: 'GET', url: '/v1/api-keys', headers: boss.headers })
      expect(listed.json().items[0].lastUsedAt).toBe(first.toISOString())
    })
  })
})

describe('an API key against another tenant', () => {
  const routes: RouteOptions[] = []
  const app = useTestApp({ before: (fastify) => fastify.addHook('onRoute', (route) => void routes.push(route)) })

  it('finds none of its ids on any id-bearing route (404, never data)', async () => {
    const a = await academy(app.current)
    const b = await academy(app.current)
    const key = await issueKey(app.current, a.owner, [...ALL_SCOPES])
    // Tenant B's things, made by B's owner.
    const message = await app.current.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers: { ...b.owner.headers, 'idempotency-key': newKey() },
      payload: { ...sendBody(), scheduledAt: new Date(Date.now() + 3_600_000).toISOString() },
    })
    const messageId = message.json().id as number
    const group = await app.current.inject({
      method: 'POST',
      url: '/v1/sms/recipient-groups',
      headers: { ...b.owner.headers, 'idempotency-key': newKey() },
      payload: { name: 'B group', recipients: recipients(2) },
    })
    const groupId = group.json().id as number
    const template = await app.current.inject({
      method: 'POST',
      url: '/v1/sms-templates',
      headers: b.owner.headers,
      payload: { name: 'B', content: 'B {name}', category: 'GENERAL' },
    })
    const templateId = template.json().id as number
    const phone = phones(1, 500)[0]!
    expect((await app.current.inject({ method: 'POST', url: '/v1/sms/opt-outs', headers: b.owner.headers, payload: { phone } })).statusCode).toBe(201)
    const consented = phones(1, 600)[0]!
    const consent = { phone: consented, source: 'WRITTEN', evidence: 'Signed form, filed at the front desk' }
    expect((await app.current.inject({ method: 'POST', url: '/v1/sms/ad-consents', headers: b.owner.headers, payload: consent })).statusCode).toBe(201)
    const klass = await owner().insertInto('classes').values({ tenantId: b.tenant.id, name: 'B class' }).returning('id').executeTakeFirstOrThrow()

    const attempts: Record<string, () => Promise<{ statusCode: number; body: string }>> = {
      'GET /v1/sms/history/:id': () => withKey(app.current, key, 'GET', `/v1/sms/history/${messageId}`),
      'POST /v1/sms/history/:id/cancel': () => withKey(app.current, key, 'POST', `/v1/sms/history/${messageId}/cancel`),
      'GET /v1/sms/recipient-groups/:id': () => withKey(app.current, key, 'GET', `/v1/sms/recipient-groups/${groupId}`),
      'PATCH /v1/sms-templates/:id': () => withKey(app.current, key, 'PATCH', `/v1/sms-templates/${templateId}`, { name: 'mine', version: 0 }),
      'DELETE /v1/sms-templates/:id': () => withKey(app.current, key, 'DELETE', `/v1/sms-templates/${templateId}`),
      'DELETE /v1/sms/opt-outs/:phone': () => withKey(app.current, key, 'DELETE', `/v1/sms/opt-outs/${phone}`),
      'DELETE /v1/sms/ad-consents/:phone': () => withKey(app.current, key, 'DELETE', `/v1/sms/ad-consents/${consented}`),
      'POST /v1/sms/send/class/:classId': () =>
        withKey(app.current, key, 'POST', `/v1/sms/send/class/${klass.id}`, { title: 'x', content: 'x' }, { 'idempotency-key': newKey() }),
      // Ids in bodies: a send to B's group.
      'POST /v1/sms/send (recipientGroupId)': () =>
        withKey(app.current, key, 'POST', '/v1/sms/send', { title: 'x', content: 'x', recipientGroupId: groupId }, { 'idempotency-key': newKey() }),
      'POST /v1/sms/send (templateId)': () =>
        withKey(app.current, key, 'POST', '/v1/sms/send', { title: 'x', content: 'x', templateId, recipients: recipients(1) }, { 'idempotency-key': newKey() }),
    }
    for (const [route, attempt] of Object.entries(attempts)) {
      const response = await attempt()
      expect({ route, status: response.statusCode }).toEqual({ route, status: 404 })
      expect(response.body).not.toContain('B group')
      expect(response.body).not.toContain('B {name}')
    }
    // Every route with an id in its path that a key can reach is tried above: a new one needs its line here.
    const keyRoutesWithIds = routes
      .filter((route) => route.url.includes(':') && resolveAccess(route.config?.access).apiKeyScope !== null)
      .flatMap((route) => [route.method].flat().filter((method) => method !== 'HEAD').map((method) => `${method} ${route.url}`))
    expect(keyRoutesWithIds.sort()).toEqual(Object.keys(attempts).filter((name) => !name.includes('(')).sort())
    // B's things are untouched.
    const stillThere = await owner().selectFrom('smsTemplates').select(['name']).where('id', '=', templateId).executeTakeFirstOrThrow()
    expect(stillThere.name).toBe('B')
    const optOut = await owner().selectFrom('smsOptOuts').select('tenantId').where('tenantId', '=', b.tenant.id).execute()
    expect(optOut).toHaveLength(1)
    const consents = await owner().selectFrom('smsAdConsents').select('tenantId').where('tenantId', '=', b.tenant.id).execute()
    expect(consents).toHaveLength(1)
  })
})
