import bcrypt from 'bcrypt'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Role } from '../../db/schema.js'
import {
  expectProblem,
  insertUserWithPassword,
  login,
  registerOwner,
  strongPassword,
  type Response,
} from '../support/auth-fixtures.js'
import { createTenant, owner, unique } from '../support/fixtures.js'
import { buildTestApp, useTestApp } from '../support/helper.js'
import { sameLoginIdInTwoTenants } from './portal-users.js'

afterEach(() => {
  vi.restoreAllMocks()
})

async function storedHash(userId: number): Promise<string> {
  const row = await owner().selectFrom('users').select('passwordHash').where('id', '=', userId).executeTakeFirstOrThrow()
  return row.passwordHash
}

/** The whole answer a client sees, minus the clock. */
// The date and the request id differ per request whatever the account; everything else must not.
function observable(response: Response) {
  const { date: _date, 'x-request-id': _requestId, ...headers } = response.headers
  return { status: response.statusCode, headers, body: response.body.replace(/"requestId":"[^"]*"/, '"requestId":"*"') }
}

describe('POST /v1/login', () => {
  const app = useTestApp()

  describe('portal entry (customId)', () => {
    it('answers 200 with both cookies and the minimal user, never the tokens', async () => {
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant)
      const { response, accessToken, refreshToken } = await login(app.current, {
        userLoginId: user.userLoginId,
        password: user.password,
        customId: tenant.customId,
      })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({
        accessExpiresIn: 3600,
        refreshExpiresIn: 604800,
        user: { id: user.id, userLoginId: user.userLoginId, name: user.name, role: 'STUDENT', tenantSlug: tenant.slug },
      })
      expect(accessToken).not.toBe('')
      expect(refreshToken).not.toBe('')
      expect(response.body).not.toContain(accessToken)
      expect(response.body).not.toContain(refreshToken)
    })

    it.each(['OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT'] as Role[])('signs in a %s', async (role) => {
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant, { role })
      const { response } = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
      expect(response.statusCode).toBe(200)
      expect(response.json().user.role).toBe(role)
    })

    it('finds the user only inside the tenant named by customId', async () => {
      const { a, b, loginId, inA, inB } = await sameLoginIdInTwoTenants('twin')
      const toA = await login(app.current, { userLoginId: loginId, password: inA.password, customId: a.customId })
      expect(toA.response.json().user).toMatchObject({ id: inA.id, tenantSlug: a.slug })
      const toB = await login(app.current, { userLoginId: loginId, password: inB.password, customId: b.customId })
      expect(toB.response.json().user).toMatchObject({ id: inB.id, tenantSlug: b.slug })
      // A's password does not open B's account of the same login id.
      expectProblem((await login(app.current, { userLoginId: loginId, password: inA.password, customId: b.customId })).response, 401, 'AUTH_001')
    })
  })

  describe('root entry (owner directory)', () => {
    it('signs an owner in without customId through the owner directory', async () => {
      const registered = await registerOwner(app.current)
      const { response } = await login(app.current, { userLoginId: registered.loginId, password: registered.password })
      expect(response.statusCode).toBe(200)
      expect(response.json().user).toEqual({
        id: registered.user.id,
        userLoginId: registered.loginId,
        name: 'Kim Owner',
        role: 'OWNER',
        tenantSlug: registered.user.tenantSlug,
      })
    })

    it('answers AUTH_001 to a student without customId, even with the right password', async () => {
      const tenant = await createTenant()
      const student = await insertUserWithPassword(tenant)
      const compare = vi.spyOn(bcrypt, 'compare')
      expectProblem((await login(app.current, { userLoginId: student.userLoginId, password: student.password })).response, 401, 'AUTH_001')
      expect(compare).toHaveBeenCalledTimes(1)
    })

    it('answers AUTH_001 to an owner that is not in the owner directory', async () => {
      // An OWNER row alone (no directory entry) is only reachable through portal entry.
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant, { role: 'OWNER' })
      expectProblem((await login(app.current, { userLoginId: user.userLoginId, password: user.password })).response, 401, 'AUTH_001')
      expect((await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })).response.statusCode).toBe(200)
    })
  })

  describe('AUTH_001: one answer for unknown tenant, unknown user and wrong password', () => {
    it('answers byte-identically after exactly one bcrypt comparison each (portal entry)', async () => {
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant)
      const compare = vi.spyOn(bcrypt, 'compare')
      const attempts = [
        { userLoginId: user.userLoginId, password: user.password, customId: unique('NOPE').slice(0, 20) },
        { userLoginId: unique('nobody'), password: user.password, customId: tenant.customId },
        { userLoginId: user.userLoginId, password: strongPassword(), customId: tenant.customId },
      ]
      const answers = []
      for (const attempt of attempts) {
        compare.mockClear()
        const { response } = await login(app.current, attempt)
        expectProblem(response, 401, 'AUTH_001')
        expect(compare).toHaveBeenCalledTimes(1)
        answers.push(observable(response))
      }
      expect(answers[1]).toEqual(answers[0])
      expect(answers[2]).toEqual(answers[0])
      expect(answers[0]!.headers['set-cookie']).toBeUndefined()
    })

    it('answers byte-identically after exactly one bcrypt comparison each (root entry)', async () => {
      const registered = await registerOwner(app.current)
      const compare = vi.spyOn(bcrypt, 'compare')
      const unknown = await login(app.current, { userLoginId: unique('no-owner'), password: registered.password })
      expect(compare).toHaveBeenCalledTimes(1)
      compare.mockClear()
      const wrong = await login(app.current, { userLoginId: registered.loginId, password: strongPassword() })
      expect(compare).toHaveBeenCalledTimes(1)
      expectProblem(unknown.response, 401, 'AUTH_001')
      expect(observable(wrong.response)).toEqual(observable(unknown.response))
    })
  })

  describe('tenant and user status', () => {
    it.each(['SUSPENDED', 'CLOSED'] as const)('answers AUTH_010 for a %s tenant through portal entry', async (status) => {
      const tenant = await createTenant({ status })
      const user = await insertUserWithPassword(tenant)
      const { response } = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
      expectProblem(response, 403, 'AUTH_010')
      expect(response.headers['set-cookie']).toBeUndefined()
    })

    it('answers AUTH_010 for a suspended tenant through root entry', async () => {
      const registered = await registerOwner(app.current)
      await owner().updateTable('tenants').set({ status: 'SUSPENDED' }).where('id', '=', registered.user.tenantId).execute()
      expectProblem((await login(app.current, { userLoginId: registered.loginId, password: registered.password })).response, 403, 'AUTH_010')
    })

    it('reveals the tenant status only to a caller with the right password', async () => {
      const tenant = await createTenant({ status: 'SUSPENDED' })
      const user = await insertUserWithPassword(tenant)
      const { response } = await login(app.current, { userLoginId: user.userLoginId, password: strongPassword(), customId: tenant.customId })
      expectProblem(response, 401, 'AUTH_001')
    })

    it.each(['SUSPENDED', 'DELETED'] as const)('answers AUTH_015 for a %s user', async (status) => {
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant, { status })
      const { response } = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
      expectProblem(response, 403, 'AUTH_015')
      const sessions = await owner().selectFrom('sessions').select('sid').where('userId', '=', user.id).execute()
      expect(sessions).toEqual([])
    })
  })

  describe('password hashes', () => {
    it.each(['$2a$', '$2y$'] as const)('verifies a %s hash from an upgraded database', async (prefix) => {
      const tenant = await createTenant()
      const password = strongPassword()
      const legacy = await bcrypt.hash(password, await bcrypt.genSalt(4, 'a'))
      const user = await insertUserWithPassword(tenant, { password, passwordHash: `${prefix}${legacy.slice(4)}` })
      const { response } = await login(app.current, { userLoginId: user.userLoginId, password, customId: tenant.customId })
      expect(response.statusCode).toBe(200)
      expectProblem(
        (await login(app.current, { userLoginId: user.userLoginId, password: strongPassword(), customId: tenant.customId })).response,
        401,
        'AUTH_001',
      )
    })

    it('keeps a hash at the configured cost unchanged', async () => {
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant, { cost: 4 })
      const before = await storedHash(user.id)
      expect((await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })).response.statusCode).toBe(200)
      expect(await storedHash(user.id)).toBe(before)
    })

    it('re-hashes a hash below the configured cost on the next good login, and only then', async () => {
      const costlier = await buildTestApp({ SVC_BCRYPT_COST: '5' })
      try {
        const tenant = await createTenant()
        const user = await insertUserWithPassword(tenant, { cost: 4 })
        const original = await storedHash(user.id)
        expect(original).toMatch(/^\$2b\$04\$/)

        const failed = await login(costlier, { userLoginId: user.userLoginId, password: strongPassword(), customId: tenant.customId })
        expectProblem(failed.response, 401, 'AUTH_001')
        expect(await storedHash(user.id)).toBe(original)

        const good = await login(costlier, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
        expect(good.response.statusCode).toBe(200)
        const upgraded = await storedHash(user.id)
        expect(upgraded).toMatch(/^\$2b\$05\$/)
        expect(await bcrypt.compare(user.password, upgraded)).toBe(true)

        const again = await login(costlier, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
        expect(again.response.statusCode).toBe(200)
        expect(await storedHash(user.id)).toBe(upgraded)
      } finally {
        await costlier.close()
      }
    })
  })

  describe('input validation', () => {
    const valid = () => ({ userLoginId: unique('login'), password: 'whatever-1', customId: 'ABCDEFGH' })
    const huge = 'x'.repeat(60_000)

    it.each<[string, string, unknown]>([
      ['userLoginId', 'missing', undefined],
      ['userLoginId', 'null', null],
      ['userLoginId', 'a number', 42],
      ['userLoginId', 'an array', ['a']],
      ['userLoginId', 'empty', ''],
      ['userLoginId', '51 characters', 'y'.repeat(51)],
      ['userLoginId', '60,000 characters (under the 64 KiB body limit)', huge],
      ['userLoginId', 'with a space', 'two words'],
      ['userLoginId', 'with a NUL character', 'nul\u0000id'],
      ['password', 'missing', undefined],
      ['password', 'null', null],
      ['password', 'a number', 12345678],
      ['password', 'an object', { value: 'x' }],
      ['password', 'empty', ''],
      ['password', '1,001 characters', 'y'.repeat(1001)],
      ['password', '60,000 characters (under the 64 KiB body limit)', huge],
      ['customId', 'null', null],
      ['customId', 'a number', 7],
      ['customId', 'empty', ''],
      ['customId', '21 characters', 'Y'.repeat(21)],
      ['customId', '60,000 characters (under the 64 KiB body limit)', huge],
      ['customId', 'with a NUL character', 'AB\u0000CD'],
    ])('rejects %s %s with VALIDATION_FAILED', async (field, _case, value) => {
      const body: Record<string, unknown> = valid()
      if (value === undefined) delete body[field]
      else body[field] = value
      const response = await app.current.inject({ method: 'POST', url: '/v1/login', payload: body })
      const problem = expectProblem(response, 400, 'VALIDATION_FAILED')
      expect((problem.errors as Array<{ field: string }>).map((error) => error.field)).toContain(`body.${field}`)
    })

    it('rejects unknown properties', async () => {
      const response = await app.current.inject({ method: 'POST', url: '/v1/login', payload: { ...valid(), tenantId: 1 } })
      expect(expectProblem(response, 400, 'VALIDATION_FAILED').errors).toEqual([
        { field: 'body.tenantId', message: 'is not an allowed property' },
      ])
    })

    it('rejects malformed JSON, non-objects and non-JSON bodies', async () => {
      const json = { 'content-type': 'application/json' }
      const post = (headers: Record<string, string>, payload: string) =>
        app.current.inject({ method: 'POST', url: '/v1/login', headers, payload })
      expectProblem(await post(json, '{"userLoginId": "a", '), 400, 'VALIDATION_FAILED')
      expectProblem(await post(json, '"text"'), 400, 'VALIDATION_FAILED')
      expectProblem(await post(json, '[]'), 400, 'VALIDATION_FAILED')
      expectProblem(await post(json, ''), 400, 'VALIDATION_FAILED')
      expectProblem(await post({ 'content-type': 'text/plain' }, 'userLoginId=a'), 415, 'UNSUPPORTED_MEDIA_TYPE')
    })

    it('treats a password with a NUL character as a wrong password, not an error', async () => {
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant)
      const { response } = await login(app.current, { userLoginId: user.userLoginId, password: `x\u0000${user.password}`, customId: tenant.customId })
      expectProblem(response, 401, 'AUTH_001')
    })
  })
})
