import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unsealSigningSecret } from '../../lib/events/signing-secret.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner as ownerDb } from '../support/fixtures.js'
import { buildTestApp } from '../support/helper.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

// Names the apps of this file resolve; no test reaches real DNS. A name missing here does not resolve.
const PUBLIC = '93.184.216.34'
const HOSTS: Record<string, string[]> = {
  'hooks.academy.example': [PUBLIC],
  'other.academy.example': ['2606:2800:220:1:248:1893:25c8:1946'],
  'loopback.example': ['127.0.0.1'],
  'mixed.example': [PUBLIC, '10.0.0.7'],
  'empty.example': [],
}
const resolveHost = async (hostname: string): Promise<string[]> => {
  const addresses = HOSTS[hostname]
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
  return addresses
}

const BOTH = ['sms.message.completed', 'sms.message.cancelled']
const URL_A = 'https://hooks.academy.example/hooks/sms'
const SECRET = /^whsec_[A-Za-z0-9+/]+=*$/

type Headers = Actor['headers']

/** The secret's base64 body (what an HMAC key is written as) and its bytes: neither may be stored in clear. */
function secretForms(secret: string): string[] {
  const body = secret.slice('whsec_'.length)
  return [secret, body, Buffer.from(body, 'base64').toString('hex')]
}

/** The tenant's stored endpoint, every column as text (read as the owner, past RLS); undefined when none. */
async function storedRow(tenantId: number): Promise<string | undefined> {
  const { rows } = await sql<{ row: string }>`select e::text as row from webhook_endpoints e where e.tenant_id = ${tenantId}`.execute(
    ownerDb(),
  )
  return rows[0]?.row
}

async function storedSealed(tenantId: number): Promise<string> {
  const row = await ownerDb().selectFrom('webhookEndpoints').select('secretSealed').where('tenantId', '=', tenantId).executeTakeFirstOrThrow()
  return row.secretSealed
}

describe('/v1/webhook-endpoint', () => {
  let app: FastifyInstance
  let permissive: FastifyInstance

  beforeAll(async () => {
    ;[app, permissive] = await Promise.all([
      buildTestApp({ SVC_WEBHOOK_ALLOW_PRIVATE: 'false' }, undefined, resolveHost),
      buildTestApp({ SVC_WEBHOOK_ALLOW_PRIVATE: 'true' }, undefined, resolveHost),
    ])
  })
  afterAll(async () => {
    await Promise.all([app?.close(), permissive?.close()])
  })

  const get = (headers: Headers | Record<string, never>) => app.inject({ method: 'GET', url: '/v1/webhook-endpoint', headers })
  const put = (headers: Headers | Record<string, never>, payload: unknown, on = app) =>
    on.inject({ method: 'PUT', url: '/v1/webhook-endpoint', headers, payload: payload as object })
  const rotate = (headers: Headers | Record<string, never>) =>
    app.inject({ method: 'POST', url: '/v1/webhook-endpoint/secret', headers })
  const remove = (headers: Headers | Record<string, never>) => app.inject({ method: 'DELETE', url: '/v1/webhook-endpoint', headers })

  /** Creates the caller's endpoint and answers its secret. */
  async function create(headers: Headers, url = URL_A): Promise<string> {
    const response = await put(headers, { url })
    expect(response.statusCode, response.body).toBe(200)
    return (response.json() as { secret: string }).secret
  }

  async function auditPage(headers: Headers): Promise<{ body: string; details: Record<string, unknown>[] }> {
    const response = await app.inject({
      method: 'GET',
      url: '/v1/audit-events?type=WEBHOOK_ENDPOINT_CHANGED&size=100',
      headers,
    })
    expect(response.statusCode, response.body).toBe(200)
    const items = (response.json() as { items: { details: Record<string, unknown> }[] }).items
    // Newest first on the wire; oldest first here, in the order of the calls.
    return { body: response.body, details: items.map((item) => item.details).reverse() }
  }

  describe('happy paths', () => {
    it('PUT creates the endpoint and answers its secret once; GET answers it without the secret', async () => {
      const { owner } = await academy(app)
      const response = await put(owner.headers, { url: URL_A })
      expect(response.statusCode, response.body).toBe(200)
      const body = response.json() as Record<string, string>
      expect(Object.keys(body).sort()).toEqual(['createdAt', 'events', 'secret', 'updatedAt', 'url'])
      expect(body).toEqual({
        url: URL_A,
        events: BOTH,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        secret: expect.stringMatching(SECRET),
      })
      expect(new Date(body.createdAt!).toISOString()).toBe(body.createdAt)
      expect(Buffer.from(body.secret!.slice('whsec_'.length), 'base64').length).toBeGreaterThanOrEqual(24)

      const read = await get(owner.headers)
      expect(read.statusCode).toBe(200)
      expect(read.json()).toEqual({ url: URL_A, events: BOTH, createdAt: body.createdAt, updatedAt: body.updatedAt })
      expect(read.body).not.toContain(body.secret!.slice('whsec_'.length))
    })

    it('a second PUT changes the URL and events, keeps createdAt and the secret, moves updatedAt, shows no secret', async () => {
      const { tenant, owner } = await academy(app)
      const secret = await create(owner.headers)
      // Back-dated, so "moves" does not hang on two requests falling in different milliseconds.
      const past = new Date('2026-01-02T03:04:05.000Z')
      await ownerDb().updateTable('webhookEndpoints').set({ createdAt: past, updatedAt: past }).where('tenantId', '=', tenant.id).execute()
      const sealedBefore = await storedSealed(tenant.id)

      const url = 'https://other.academy.example/v2/events'
      const response = await put(owner.headers, { url, events: ['sms.message.cancelled'] })
      expect(response.statusCode, response.body).toBe(200)
      const body = response.json() as Record<string, string>
      expect(body).not.toHaveProperty('secret')
      expect(body).toEqual({ url, events: ['sms.message.cancelled'], createdAt: past.toISOString(), updatedAt: expect.any(String) })
      expect(new Date(body.updatedAt!).getTime()).toBeGreaterThan(past.getTime())
      expect((await get(owner.headers)).json()).toEqual(body)

      const sealedAfter = await storedSealed(tenant.id)
      expect(sealedAfter).toBe(sealedBefore)
      expect(unsealSigningSecret(app.webhooks.sealingKey, tenant.id, sealedAfter)).toBe(secret)
    })

    it('defaults events to every type and keeps a subset as given', async () => {
      const { owner } = await academy(app)
      expect((await put(owner.headers, { url: URL_A })).json().events).toEqual(BOTH)
      const subset = await put(owner.headers, { url: URL_A, events: ['sms.message.completed'] })
      expect(subset.json().events).toEqual(['sms.message.completed'])
      expect((await get(owner.headers)).json().events).toEqual(['sms.message.completed'])
    })

    it('POST /secret without an endpoint answers 404 WEBHOOK_ENDPOINT_NOT_FOUND', async () => {
      const { owner } = await academy(app)
      expectProblem(await rotate(owner.headers), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND')
    })

    it('DELETE answers 204, then GET answers 404 and nothing is stored', async () => {
      const { tenant, owner } = await academy(app)
      await create(owner.headers)
      const response = await remove(owner.headers)
      expect(response.statusCode).toBe(204)
      expect(response.body).toBe('')
      expectProblem(await get(owner.headers), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND')
      expect(await storedRow(tenant.id)).toBeUndefined()
    })

    it('DELETE without an endpoint answers 204 and records no event', async () => {
      const { owner } = await academy(app)
      expect((await remove(owner.headers)).statusCode).toBe(204)
      expectProblem(await get(owner.headers), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND')
      expect((await auditPage(owner.headers)).details).toEqual([])
    })

    it('a PUT after DELETE creates the endpoint again with a new secret', async () => {
      const { owner } = await academy(app)
      const first = await create(owner.headers)
      await remove(owner.headers)
      const second = await create(owner.headers)
      expect(second).toMatch(SECRET)
      expect(second).not.toBe(first)
    })
  })

  describe('the secret is never stored or recorded in clear', () => {
    it('the stored row holds neither the secret nor its bytes', async () => {
      const { tenant, owner } = await academy(app)
      const created = await create(owner.headers)
      const stored = await storedRow(tenant.id)
      expect(stored).toContain('hooks.academy.example')
      for (const form of secretForms(created)) expect(stored).not.toContain(form)
      expect(unsealSigningSecret(app.webhooks.sealingKey, tenant.id, await storedSealed(tenant.id))).toBe(created)
    })

    it('records WEBHOOK_ENDPOINT_CHANGED as documented, without the secret', async () => {
      const { owner } = await academy(app)
      const created = await create(owner.headers)
      await put(owner.headers, { url: 'https://other.academy.example/x', events: ['sms.message.completed'] })
      await remove(owner.headers)

      const audit = await auditPage(owner.headers)
      expect(audit.details).toEqual([
        { url: 'https://hooks.academy.example', events: BOTH, created: true },
        { url: 'https://other.academy.example', events: ['sms.message.completed'], created: false },
        { removed: true },
      ])
      for (const form of secretForms(created)) expect(audit.body).not.toContain(form)
    })

    it('names the URL by its origin only: a path and a query token stay out of the audit log', async () => {
      const { owner } = await academy(app)
      const url = 'https://hooks.academy.example:8443/tenant-hooks/receive?token=abc123'
      const response = await put(owner.headers, { url })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().url).toBe(url)

      const audit = await auditPage(owner.headers)
      expect(audit.details).toEqual([{ url: 'https://hooks.academy.example:8443', events: BOTH, created: true }])
      expect(audit.body).not.toContain('abc123')
      expect(audit.body).not.toContain('tenant-hooks')
    })
  })

  describe('authorization', () => {
    const calls = [
      ['GET', get],
      ['PUT', (headers: Headers | Record<string, never>) => put(headers, { url: URL_A })],
      ['POST /secret', rotate],
      ['DELETE', remove],
    ] as const

    it.each(calls)('%s without a token answers 401 AUTH_002', async (_name, call) => {
      expectProblem(await call({}), 401, 'AUTH_002')
    })

    it.each(calls)('%s by a MANAGER, INSTRUCTOR or STUDENT answers 403 AUTH_008 and changes nothing', async (_name, call) => {
      const { tenant, owner, manager, instructor, student } = await academy(app)
      await create(owner.headers)
      const [before, sealedBefore] = [await get(owner.headers), await storedSealed(tenant.id)]
      for (const actor of [manager, instructor, student]) {
        expectProblem(await call(actor.headers), 403, 'AUTH_008')
      }
      const after = await get(owner.headers)
      expect(after.json()).toEqual(before.json())
      expect(await storedSealed(tenant.id)).toBe(sealedBefore)
    })

    it('another academy never sees, replaces, rotates or removes this one\'s endpoint', async () => {
      const a = await academy(app)
      const b = await academy(app)
      const secretA = await create(a.owner.headers)
      const endpointA = (await get(a.owner.headers)).json()
      const sealedA = await storedSealed(a.tenant.id)

      expectProblem(await get(b.owner.headers), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND')
      expectProblem(await rotate(b.owner.headers), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND')
      expect((await remove(b.owner.headers)).statusCode).toBe(204)
      expect((await get(a.owner.headers)).json()).toEqual(endpointA)

      const urlB = 'https://other.academy.example/b'
      const createdB = await put(b.owner.headers, { url: urlB, events: ['sms.message.cancelled'] })
      expect(createdB.statusCode, createdB.body).toBe(200)
      const secretB = createdB.json().secret as string
      expect(secretB).toMatch(SECRET)
      expect(secretB).not.toBe(secretA)
      expect((await get(b.owner.headers)).json()).toMatchObject({ url: urlB, events: ['sms.message.cancelled'] })

      expect((await get(a.owner.headers)).json()).toEqual(endpointA)
      expect(await storedSealed(a.tenant.id)).toBe(sealedA)
      expect(unsealSigningSecret(app.webhooks.sealingKey, a.tenant.id, sealedA)).toBe(secretA)
      // Sealed for its tenant: A's stored value does not open as B's.
      expect(unsealSigningSecret(app.webhooks.sealingKey, b.tenant.id, sealedA)).toBeNull()
    })
  })

  describe('bad input', () => {
    const refused: [string, string][] = [
      ['an http:// URL', 'http://hooks.academy.example/hooks'],
      ['an ftp:// URL', 'ftp://hooks.academy.example/hooks'],
      ['a relative URL', '/hooks/sms'],
      ['text that is no URL', 'not a url'],
      ['a URL with a user and password', 'https://user:pass@hooks.academy.example/hooks'],
      ['a URL with a user only', 'https://user@hooks.academy.example/hooks'],
      ['a URL over 2000 characters', `https://hooks.academy.example/${'a'.repeat(2000)}`],
      ['IPv4 loopback', 'https://127.0.0.1/hooks'],
      ['IPv6 loopback', 'https://[::1]/hooks'],
      ['10/8', 'https://10.0.0.5/hooks'],
      ['172.16/12', 'https://172.16.3.4/hooks'],
      ['192.168/16', 'https://192.168.1.1/hooks'],
      ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data'],
      ['IPv6 unique-local', 'https://[fd00::1]/hooks'],
      ['IPv6 link-local', 'https://[fe80::1]/hooks'],
      ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hooks'],
      ['6to4 of the cloud metadata address', 'https://[2002:a9fe:a9fe::1]/hooks'],
      ['NAT64 of a private address', 'https://[64:ff9b::10.0.0.8]/hooks'],
      ['IPv6 site-local', 'https://[fec0::1]/hooks'],
      ['0.0.0.0', 'https://0.0.0.0/hooks'],
      ['a name resolving to loopback', 'https://loopback.example/hooks'],
      ['a name resolving to a public and a private address', 'https://mixed.example/hooks'],
      ['a name that does not resolve', 'https://nowhere.example/hooks'],
      ['a name with no address', 'https://empty.example/hooks'],
    ]

    it.each(refused)('refuses %s with 400 WEBHOOK_URL_INVALID and stores nothing', async (_name, url) => {
      const { tenant, owner } = await academy(app)
      const response = await put(owner.headers, { url })
      expectProblem(response, 400, 'WEBHOOK_URL_INVALID')
      expect(await storedRow(tenant.id)).toBeUndefined()
      expectProblem(await get(owner.headers), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND')
      expect((await auditPage(owner.headers)).details).toEqual([])
    })

    it('a refused URL leaves an existing endpoint as it was', async () => {
      const { tenant, owner } = await academy(app)
      await create(owner.headers)
      const before = [await get(owner.headers), await storedRow(tenant.id)] as const
      expectProblem(await put(owner.headers, { url: 'https://loopback.example/x', events: ['sms.message.cancelled'] }), 400, 'WEBHOOK_URL_INVALID')
      expect((await get(owner.headers)).json()).toEqual(before[0].json())
      expect(await storedRow(tenant.id)).toBe(before[1])
    })

    it('accepts a name that resolves to a public address, and a URL of exactly 2000 characters', async () => {
      const { owner } = await academy(app)
      expect((await put(owner.headers, { url: 'https://hooks.academy.example/ok' })).statusCode).toBe(200)
      const longest = 'https://hooks.academy.example/'.padEnd(2000, 'a')
      const response = await put(owner.headers, { url: longest })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().url).toBe(longest)
    })

    it('with SVC_WEBHOOK_ALLOW_PRIVATE=true accepts http:// on loopback', async () => {
      const { tenant, owner } = await academy(permissive)
      const url = 'http://127.0.0.1:1234/x'
      const response = await put(owner.headers, { url }, permissive)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json()).toMatchObject({ url, events: BOTH, secret: expect.stringMatching(SECRET) })
      expect(await storedRow(tenant.id)).toContain(url)
    })

    it('with SVC_WEBHOOK_ALLOW_PRIVATE=true still refuses other schemes and credentials', async () => {
      const { tenant, owner } = await academy(permissive)
      for (const url of ['ftp://127.0.0.1/x', 'http://user:pass@127.0.0.1:1234/x']) {
        expectProblem(await put(owner.headers, { url }, permissive), 400, 'WEBHOOK_URL_INVALID')
      }
      expect(await storedRow(tenant.id)).toBeUndefined()
    })

    const malformed: [string, unknown][] = [
      ['an unknown field', { url: URL_A, secret: 'whsec_AAAA' }],
      ['no url', { events: BOTH }],
      ['a url that is not a string', { url: 123 }],
      ['empty events', { url: URL_A, events: [] }],
      ['an unknown event type', { url: URL_A, events: ['sms.message.sent'] }],
      ['duplicate events', { url: URL_A, events: ['sms.message.completed', 'sms.message.completed'] }],
      ['events that are not a list', { url: URL_A, events: 'sms.message.completed' }],
    ]

    it.each(malformed)('answers 400 VALIDATION_FAILED for %s and stores nothing', async (_name, body) => {
      const { tenant, owner } = await academy(app)
      expectProblem(await put(owner.headers, body), 400, 'VALIDATION_FAILED')
      expect(await storedRow(tenant.id)).toBeUndefined()
    })
  })

  describe('POST /v1/webhook-endpoint/secret', () => {
    it('POST /secret answers a new, different secret; the stored one is replaced and GET still shows none', async () => {
      const { tenant, owner } = await academy(app)
      const first = await create(owner.headers)
      const response = await rotate(owner.headers)
      expect(response.statusCode, response.body).toBe(200)
      const body = response.json() as { secret: string }
      expect(Object.keys(body)).toEqual(['secret'])
      expect(body.secret).toMatch(SECRET)
      expect(Buffer.from(body.secret.slice('whsec_'.length), 'base64').length).toBeGreaterThanOrEqual(24)
      expect(body.secret).not.toBe(first)
      expect(unsealSigningSecret(app.webhooks.sealingKey, tenant.id, await storedSealed(tenant.id))).toBe(body.secret)

      const read = await get(owner.headers)
      expect(read.statusCode).toBe(200)
      expect(read.json()).not.toHaveProperty('secret')
      for (const form of [...secretForms(first), ...secretForms(body.secret)]) expect(read.body).not.toContain(form)
    })

    it('the stored row holds neither the secret nor its bytes, after PUT and after rotation', async () => {
      const { tenant, owner } = await academy(app)
      const created = await create(owner.headers)
      const afterCreate = await storedRow(tenant.id)
      expect(afterCreate).toContain('hooks.academy.example')
      for (const form of secretForms(created)) expect(afterCreate).not.toContain(form)

      const rotated = (await rotate(owner.headers)).json().secret as string
      const afterRotation = await storedRow(tenant.id)
      expect(afterRotation).not.toBe(afterCreate)
      for (const form of [...secretForms(created), ...secretForms(rotated)]) expect(afterRotation).not.toContain(form)
    })

    it('records WEBHOOK_ENDPOINT_CHANGED as documented, without any secret', async () => {
      const { owner } = await academy(app)
      const created = await create(owner.headers)
      await put(owner.headers, { url: 'https://other.academy.example/x', events: ['sms.message.completed'] })
      const rotated = (await rotate(owner.headers)).json().secret as string
      await remove(owner.headers)

      const audit = await auditPage(owner.headers)
      expect(audit.details).toEqual([
        { url: 'https://hooks.academy.example', events: BOTH, created: true },
        { url: 'https://other.academy.example', events: ['sms.message.completed'], created: false },
        { rotated: true },
        { removed: true },
      ])
      for (const form of [...secretForms(created), ...secretForms(rotated)]) expect(audit.body).not.toContain(form)
    })

    it("another academy's rotation leaves this one's stored secret as it was", async () => {
      const a = await academy(app)
      const b = await academy(app)
      const secretA = await create(a.owner.headers)
      const sealedA = await storedSealed(a.tenant.id)
      const secretB = await create(b.owner.headers)
      const rotatedB = (await rotate(b.owner.headers)).json().secret as string
      expect(rotatedB).toMatch(SECRET)
      expect(rotatedB).not.toBe(secretB)
      expect(await storedSealed(a.tenant.id)).toBe(sealedA)
      expect(unsealSigningSecret(app.webhooks.sealingKey, a.tenant.id, sealedA)).toBe(secretA)
      expect(unsealSigningSecret(app.webhooks.sealingKey, b.tenant.id, await storedSealed(b.tenant.id))).toBe(rotatedB)
    })
  })
})
