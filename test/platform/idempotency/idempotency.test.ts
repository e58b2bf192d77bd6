import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { canonicalJson, requestFingerprint } from '../../../lib/idempotency/fingerprint.js'
import { until } from '../../support/auth-fixtures.js'
import { createTenant, owner } from '../../support/fixtures.js'
import { itConcurrent, useTestApp } from '../../support/helper.js'
import { keyRows, messageRows, minutesFromNow, newKey, post, problem, recipients, send } from '../../support/sms-send-fixtures.js'
import { academy, actor, type Actor } from '../../support/staff-fixtures.js'

/** Lets a test hold a handler at a point and know when it got there. */
class Gates {
  private readonly open = new Map<string, () => void>()
  private readonly reached = new Map<string, () => void>()
  private readonly reachedPromises = new Map<string, Promise<void>>()

  private reachedPromise(name: string): Promise<void> {
    let promise = this.reachedPromises.get(name)
    if (!promise) {
      promise = new Promise<void>((resolve) => this.reached.set(name, resolve))
      this.reachedPromises.set(name, promise)
    }
    return promise
  }

  wait(name: string): Promise<void> {
    this.reachedPromise(name)
    this.reached.get(name)!()
    return new Promise<void>((resolve) => this.open.set(name, resolve))
  }

  arrival(name: string): Promise<void> {
    return this.reachedPromise(name)
  }

  release(name: string): void {
    this.open.get(name)!()
  }
}

/** SVC_IDEMPOTENCY_CLAIM_SECONDS of the plugin's app: its smallest allowed value. */
const CLAIM_SECONDS = 5

describe('idempotency plugin', () => {
  const gates = new Gates()
  const handlerRuns: string[] = []
  const keyStateDuringHandler: (string | undefined)[] = []

  const app = useTestApp({ extend: async (test) => {
      const load = async (trx: Parameters<NonNullable<import('fastify').FastifyContextConfig['idempotency']>['load']>[0], id: number) => {
        const row = await trx.selectFrom('classes').select(['id', 'name']).where('id', '=', id).executeTakeFirst()
        if (!row) throw new AppError('NOT_FOUND')
        return row
      }
      const body = Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 50 }),
          fail: Type.Optional(Type.Union([Type.Literal('client'), Type.Literal('server')])),
          gate: Type.Optional(Type.String()),
          probe: Type.Optional(Type.Boolean()),
          tags: Type.Optional(Type.Array(Type.Object({ a: Type.Optional(Type.Integer()), b: Type.Optional(Type.Integer()) }))),
        },
        { additionalProperties: false },
      )
      const response = { 201: Type.Object({ id: Type.Integer(), name: Type.String() }) }
      const handler = async (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
        const input = request.body as { name: string; fail?: string; gate?: string; probe?: boolean }
        handlerRuns.push(input.name)
        if (input.probe) {
          // Another session's view of the key while this request's transaction is open.
          const visible = await owner()
            .selectFrom('idempotencyKeys')
            .select('state')
            .where('tenantId', '=', request.tenantId!)
            .where('key', '=', request.headers['idempotency-key'] as string)
            .executeTakeFirst()
          keyStateDuringHandler.push(visible?.state)
        }
        const row = await request.db
          .insertInto('classes')
          .values({ tenantId: request.tenantId!, name: input.name })
          .returning(['id', 'name'])
          .executeTakeFirstOrThrow()
        if (input.gate) await gates.wait(input.gate)
        if (input.fail === 'client') throw new AppError('RECIPIENTS_REQUIRED')
        if (input.fail === 'server') throw new Error('boom')
        await request.completeIdempotency(row.id, 201)
        return reply.code(201).send(row)
      }
      test.post('/test/idem/:slot', { config: { access: 'user', idempotency: { load } }, schema: { params: Type.Object({ slot: Type.Integer() }), body, response } }, handler)
      test.post('/test/idem-other', { config: { access: 'user', idempotency: { load } }, schema: { body, response } }, handler)
    }, env: { SVC_IDEMPOTENCY_CLAIM_SECONDS: String(CLAIM_SECONDS) } })

  const call = (who: Actor, payload: unknown, key: string | null = newKey(), url = '/test/idem/1') => post(app.current, url, who, payload, key)
  const classCount = async (tenantId: number) =>
    Number((await owner().selectFrom('classes').select((eb) => eb.fn.countAll<string>().as('n')).where('tenantId', '=', tenantId).executeTakeFirstOrThrow()).n)
  const staff = async () => {
    const tenant = await createTenant()
    return { tenant, who: await actor(app.current, tenant, 'OWNER') }
  }
  /** Sends a call whose handler waits at a gate of its own; returns once it waits there, its response to come on release. */
  const callHeldInHandler = async (who: Actor, name: string, key: string) => {
    const gate = `${name}-${key}`
    const response = call(who, { name, gate }, key)
    await gates.arrival(gate)
    return { gate, response }
  }

  describe('claiming and completing', () => {
    itConcurrent('commits the claim before the handler runs and completes it together with the resource', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      const name = `commit-${key}`
      const response = await call(who, { name, probe: true }, key)
      expect(response.statusCode).toBe(201)
      expect(keyStateDuringHandler.at(-1)).toBe('IN_PROGRESS')
      const [row] = await keyRows(tenant)
      expect(row).toMatchObject({ userId: who.user.id, route: 'POST /test/idem/:slot', key, state: 'COMPLETED', resourceId: response.json().id, statusCode: 201 })
      expect(row!.fingerprint).toMatch(/^[0-9a-f]{64}$/)
      const retentionHours = (row!.expiresAt.getTime() - row!.createdAt.getTime()) / 3_600_000
      expect(retentionHours).toBeCloseTo(24, 3)
    })

    it('replays a completed key: same status, current representation, the header, and the handler never runs', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      const name = `replay-${key}`
      const first = await call(who, { name }, key)
      await owner().updateTable('classes').set({ name: 'renamed since' }).where('id', '=', first.json().id).execute()
      const runsBefore = handlerRuns.length
      const again = await call(who, { name }, key)
      expect(again.statusCode).toBe(201)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json()).toEqual({ id: first.json().id, name: 'renamed since' })
      expect(first.headers['idempotent-replayed']).toBeUndefined()
      expect(handlerRuns.length).toBe(runsBefore)
      expect(await classCount(tenant.id)).toBe(1)
    })

    it('answers AUTH_004 to a revoked token instead of replaying, and claims nothing for it', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      expect((await call(who, { name: 'before logout' }, key)).statusCode).toBe(201)
      const token = who.headers.authorization.replace('Bearer ', '')
      const { jti, exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number }
      await owner().insertInto('revokedAccessTokens').values({ jti, expiresAt: new Date(exp * 1000) }).execute()
      expect(problem(await call(who, { name: 'before logout' }, key))).toEqual({ status: 401, code: 'AUTH_004' })
      expect(problem(await call(who, { name: 'after logout' }))).toEqual({ status: 401, code: 'AUTH_004' })
      expect(await keyRows(tenant)).toHaveLength(1)
      expect(await classCount(tenant.id)).toBe(1)
    })

    it('treats object key order as irrelevant to the fingerprint', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      const first = await call(who, { name: 'ordered', tags: [{ a: 1, b: 2 }] }, key)
      const again = await app.current.inject({
        method: 'POST',
        url: '/test/idem/1',
        headers: { ...who.headers, 'idempotency-key': key, 'content-type': 'application/json' },
        payload: '{"tags":[{"b":2,"a":1}],"name":"ordered"}',
      })
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json().id).toBe(first.json().id)
      expect(await classCount(tenant.id)).toBe(1)
    })

    it('answers IDEMPOTENCY_KEY_REUSED for the same key with another body or other path parameters', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      expect((await call(who, { name: 'first' }, key)).statusCode).toBe(201)
      expect(problem(await call(who, { name: 'second' }, key))).toEqual({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' })
      expect(problem(await call(who, { name: 'first' }, key, '/test/idem/2'))).toEqual({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' })
      expect(await classCount(tenant.id)).toBe(1)
      expect((await keyRows(tenant))[0]!.state).toBe('COMPLETED')
    })

    it('scopes keys per user and per route', async () => {
      const { tenant, who } = await staff()
      const colleague = await actor(app.current, tenant, 'MANAGER')
      const key = newKey()
      const mine = await call(who, { name: 'scoped' }, key)
      const theirs = await call(colleague, { name: 'scoped' }, key)
      const otherRoute = await call(who, { name: 'scoped' }, key, '/test/idem-other')
      for (const response of [mine, theirs, otherRoute]) {
        expect(response.statusCode).toBe(201)
        expect(response.headers['idempotent-replayed']).toBeUndefined()
      }
      expect(new Set([mine.json().id, theirs.json().id, otherRoute.json().id]).size).toBe(3)
      expect(await keyRows(tenant)).toHaveLength(3)
    })
  })

  describe('rejected requests leave no key', () => {
    it.each([
      [
        'a 4xx from the handler, so a corrected retry succeeds',
        { refused: { name: 'bad', fail: 'client' }, answer: { status: 400, code: 'RECIPIENTS_REQUIRED' }, retry: { name: 'good' } },
      ],
      [
        'a 500 and keeps nothing of the request',
        { refused: { name: 'boom', fail: 'server' }, answer: { status: 500, code: 'INTERNAL_ERROR' }, retry: { name: 'boom' } },
      ],
    ])('gives the key back after %s', async (_after, { refused, answer, retry }) => {
      const { tenant, who } = await staff()
      const key = newKey()
      expect(problem(await call(who, refused, key))).toEqual(answer)
      expect(await keyRows(tenant)).toHaveLength(0)
      expect(await classCount(tenant.id)).toBe(0)
      const retried = await call(who, retry, key)
      expect(retried.statusCode).toBe(201)
      expect(retried.headers['idempotent-replayed']).toBeUndefined()
    })

    itConcurrent('never claims a key for a request its schema refuses', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      const { gate, response: held } = await callHeldInHandler(who, 'holder', key)
      // Were the malformed request to claim, it would meet the running one and answer 409 instead.
      expect(problem(await call(who, { name: 'holder', unknown: true }, key))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
      expect(problem(await call(who, { name: 'x'.repeat(51) }, key))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
      gates.release(gate)
      expect((await held).statusCode).toBe(201)
      expect(await keyRows(tenant)).toHaveLength(1)
    })

    itConcurrent('gives the key back when the client hangs up mid-request, and rolls the resource back', async () => {
      const { tenant, who } = await staff()
      await app.current.listen({ port: 0, host: '127.0.0.1' })
      const { port } = app.current.server.address() as AddressInfo
      const key = newKey()
      const gate = `hangup-${key}`
      const payload = JSON.stringify({ name: 'hung up', gate })
      const outgoing = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/test/idem/1',
        headers: { ...who.headers, 'idempotency-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      })
      outgoing.on('error', () => undefined)
      outgoing.end(payload)
      await gates.arrival(gate)
      outgoing.destroy()
      await new Promise((resolve) => setTimeout(resolve, 100))
      gates.release(gate)
      await until(async () => (await keyRows(tenant)).length === 0)
      expect(await classCount(tenant.id)).toBe(0)
      expect((await call(who, { name: 'hung up', gate: undefined }, key)).statusCode).toBe(201)
    })
  })

  describe('concurrency and expiry', () => {
    itConcurrent('answers IDEMPOTENCY_REQUEST_IN_PROGRESS at once to a duplicate of a running request', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      const { gate, response: first } = await callHeldInHandler(who, 'slow', key)
      // The duplicate is answered while the first is still held: it does not queue behind it.
      expect(problem(await call(who, { name: 'slow', gate }, key))).toEqual({ status: 409, code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS' })
      gates.release(gate)
      const done = await first
      expect(done.statusCode).toBe(201)
      const replay = await call(who, { name: 'slow', gate }, key)
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect(replay.json().id).toBe(done.json().id)
      expect(await classCount(tenant.id)).toBe(1)
    })

    const insertKey = (tenantId: number, userId: number, key: string, values: Record<string, unknown>) =>
      owner()
        .insertInto('idempotencyKeys')
        .values({
          tenantId,
          userId,
          route: 'POST /test/idem/:slot',
          key,
          fingerprint: '0'.repeat(64),
          state: 'IN_PROGRESS',
          expiresAt: sql<Date>`now() + interval '1 day'`,
          ...values,
        })
        .execute()

    const secondsAgo = (seconds: number) => sql<Date>`date_trunc('milliseconds', now()) - make_interval(secs => ${seconds})`

    it('keeps answering 409 for an IN_PROGRESS key younger than SVC_IDEMPOTENCY_CLAIM_SECONDS and takes over an older one', async () => {
      const { tenant, who } = await staff()
      const fingerprint = requestFingerprint('POST', '/test/idem/:slot', { slot: 1 }, { name: 'held' })
      const fresh = newKey()
      await insertKey(tenant.id, who.user.id, fresh, { fingerprint, createdAt: secondsAgo(CLAIM_SECONDS - 2) })
      expect(problem(await call(who, { name: 'held' }, fresh))).toEqual({ status: 409, code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS' })
      expect(problem(await call(who, { name: 'other' }, fresh))).toEqual({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' })
      const stale = newKey()
      await insertKey(tenant.id, who.user.id, stale, { fingerprint, createdAt: secondsAgo(CLAIM_SECONDS + 1) })
      const taken = await call(who, { name: 'held' }, stale)
      expect(taken.statusCode).toBe(201)
      expect(taken.headers['idempotent-replayed']).toBeUndefined()
      expect((await keyRows(tenant)).find((row) => row.key === stale)).toMatchObject({ state: 'COMPLETED', resourceId: taken.json().id })
      expect((await keyRows(tenant)).find((row) => row.key === fresh)).toMatchObject({ state: 'IN_PROGRESS' })
    })

    itConcurrent('refuses to complete a request that held its key past SVC_IDEMPOTENCY_CLAIM_SECONDS and was taken over, so only one resource results', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      const { gate, response: slow } = await callHeldInHandler(who, 'taken over', key)
      // As if the handler had been held for longer than the claim lasts.
      await owner()
        .updateTable('idempotencyKeys')
        .set({ createdAt: sql<Date>`created_at - make_interval(secs => ${CLAIM_SECONDS + 1})` })
        .where('tenantId', '=', tenant.id)
        .execute()
      const retry = await call(who, { name: 'taken over' }, key)
      expect(retry.statusCode).toBe(201)
      gates.release(gate)
      expect(problem(await slow)).toEqual({ status: 409, code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS' })
      expect(await classCount(tenant.id)).toBe(1)
      expect(await keyRows(tenant)).toEqual([expect.objectContaining({ state: 'COMPLETED', resourceId: retry.json().id })])
    })

    itConcurrent('refuses to complete a request that was taken over even while the request that took its key still runs', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      const { gate, response: slow } = await callHeldInHandler(who, 'first holder', key)
      await owner()
        .updateTable('idempotencyKeys')
        .set({ createdAt: sql<Date>`created_at - make_interval(secs => ${CLAIM_SECONDS + 1})` })
        .where('tenantId', '=', tenant.id)
        .execute()
      // The retry takes the key over and is held in turn: the key is IN_PROGRESS again, under the retry's stamp.
      const { gate: retryGate, response: retry } = await callHeldInHandler(who, 'second holder', key)
      gates.release(gate)
      expect(problem(await slow)).toEqual({ status: 409, code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS' })
      gates.release(retryGate)
      const created = await retry
      expect(created.statusCode).toBe(201)
      expect(await classCount(tenant.id)).toBe(1)
      expect(await keyRows(tenant)).toEqual([expect.objectContaining({ state: 'COMPLETED', resourceId: created.json().id })])
    })

    it('treats an expired completed key as absent', async () => {
      const { tenant, who } = await staff()
      const key = newKey()
      const first = await call(who, { name: 'old' }, key)
      await owner().updateTable('idempotencyKeys').set({ expiresAt: sql<Date>`now() - interval '1 second'` }).where('tenantId', '=', tenant.id).execute()
      const again = await call(who, { name: 'old' }, key)
      expect(again.statusCode).toBe(201)
      expect(again.headers['idempotent-replayed']).toBeUndefined()
      expect(again.json().id).not.toBe(first.json().id)
      const [row] = await keyRows(tenant)
      expect(row!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000)
    })

    it('purges expired keys and keeps live ones', async () => {
      const { tenant, who } = await staff()
      await insertKey(tenant.id, who.user.id, 'expired', { state: 'COMPLETED', resourceId: 1, statusCode: 201, expiresAt: sql<Date>`now() - interval '1 minute'` })
      await insertKey(tenant.id, who.user.id, 'live', { state: 'COMPLETED', resourceId: 1, statusCode: 201 })
      expect(await app.current.purgeExpired()).toBeGreaterThanOrEqual(1)
      expect((await keyRows(tenant)).map((row) => row.key)).toEqual(['live'])
    })
  })

  describe('the header', () => {
    it.each([
      ['missing', null],
      ['empty', ''],
      ['256 characters', 'k'.repeat(256)],
      ['containing a space', 'my key'],
      ['containing a tab', 'my\tkey'],
      ['containing a non-ASCII character', 'cl\u00e9'],
    ])('answers IDEMPOTENCY_KEY_MISSING for a key that is %s', async (_label, key) => {
      const { tenant, who } = await staff()
      expect(problem(await call(who, { name: 'k' }, key))).toEqual({ status: 400, code: 'IDEMPOTENCY_KEY_MISSING' })
      expect(await keyRows(tenant)).toHaveLength(0)
    })

    it('accepts 255 visible ASCII characters', async () => {
      const { who } = await staff()
      const key = Array.from({ length: 255 }, (_, index) => String.fromCharCode(0x21 + (index % 94))).join('')
      expect((await call(who, { name: 'k' }, key)).statusCode).toBe(201)
    })
  })

  describe('fingerprint', () => {
    it('is canonical JSON with sorted keys at every depth', () => {
      expect(canonicalJson({ b: [{ d: 1, c: null }], a: 'x', skip: undefined })).toBe('{"a":"x","b":[{"c":null,"d":1}]}')
      expect(canonicalJson(['é', 1.5, true])).toBe('["é",1.5,true]')
    })

    it('changes with method, route, params and body, and not with key order', () => {
      const base = requestFingerprint('POST', '/v1/sms/send', {}, { a: 1, b: 2 })
      expect(requestFingerprint('POST', '/v1/sms/send', {}, { b: 2, a: 1 })).toBe(base)
      expect(requestFingerprint('PUT', '/v1/sms/send', {}, { a: 1, b: 2 })).not.toBe(base)
      expect(requestFingerprint('POST', '/v1/sms/other', {}, { a: 1, b: 2 })).not.toBe(base)
      expect(requestFingerprint('POST', '/v1/sms/send', { id: 1 }, { a: 1, b: 2 })).not.toBe(base)
      expect(requestFingerprint('POST', '/v1/sms/send', {}, { a: 1, b: 3 })).not.toBe(base)
    })
  })
})

describe('idempotency on the SMS routes', () => {
  const app = useTestApp()

  it('turns 20 concurrent identical sends into exactly one message', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    const key = newKey()
    const payload = { recipients: recipients(50), title: 'Once', content: 'Only once, {name}', scheduledAt: minutesFromNow(60) }
    const responses = await Promise.all(Array.from({ length: 20 }, () => send(app.current, sender, payload, key)))
    const statuses = responses.map((response) => response.statusCode)
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true)
    const created = responses.filter((response) => response.statusCode === 201)
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(new Set(created.map((response) => response.json().id)).size).toBe(1)
    expect(created.filter((response) => response.headers['idempotent-replayed'] !== 'true')).toHaveLength(1)
    for (const conflict of responses.filter((response) => response.statusCode === 409)) {
      expect(conflict.json().code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS')
    }
    expect(await messageRows(tenant)).toHaveLength(1)
  })

  it('replays a send with the message as it is now', async () => {
    const { owner: sender } = await academy(app.current)
    const key = newKey()
    const payload = { recipients: recipients(2), title: 'Later', content: 'c', scheduledAt: minutesFromNow(60) }
    const first = await send(app.current, sender, payload, key)
    await app.current.inject({ method: 'POST', url: `/v1/sms/history/${first.json().id}/cancel`, headers: sender.headers })
    const again = await send(app.current, sender, payload, key)
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toMatchObject({ id: first.json().id, status: 'CANCELLED' })
    expect(again.json().recipients.map((r: { deliveryStatus: string }) => r.deliveryStatus)).toEqual(['CANCELLED', 'CANCELLED'])
  })

  it('lets a rejected send be corrected and retried with the same key', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    const key = newKey()
    const bad = await send(app.current, sender, { recipients: [{ phone: 'nope' }], title: 't', content: 'c' }, key)
    expect(problem(bad)).toEqual({ status: 400, code: 'INVALID_PHONE_NUMBER' })
    expect(await keyRows(tenant)).toHaveLength(0)
    const good = await send(app.current, sender, { recipients: [{ phone: '010-1234-5678' }], title: 't', content: 'c' }, key)
    expect(good.statusCode).toBe(201)
    expect(await messageRows(tenant)).toHaveLength(1)
  })

  it('keeps keys of send and group creation apart', async () => {
    const { owner: sender } = await academy(app.current)
    const key = newKey()
    expect((await send(app.current, sender, { recipients: recipients(1), title: 't', content: 'c' }, key)).statusCode).toBe(201)
    expect((await post(app.current, '/v1/sms/recipient-groups', sender, { name: 'g', recipients: recipients(1) }, key)).statusCode).toBe(201)
  })
})
