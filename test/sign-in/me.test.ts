import { randomBytes, randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { describe, expect, it } from 'vitest'
import type { Role } from '../../db/schema.js'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { createTenant, insertUser, owner, unique, type TenantRow } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { actor } from '../support/staff-fixtures.js'
import { injectJsonText } from '../platform/raw-json-body.js'

const app = useTestApp()

const strongPassword = () => `Pw-${randomBytes(6).toString('hex')}-42`
const cookie = (response: LightMyRequestResponse, name: string) =>
  response.cookies.find((entry) => entry.name === name)?.value ?? ''
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** A student registered for real (a session row exists), so session revocation can be observed. */
async function registeredStudent(tenant: TenantRow, device = 'WEB') {
  const userLoginId = unique('student')
  const password = strongPassword()
  const response = await app.current.inject({
    method: 'POST',
    url: '/v1/register',
    headers: { 'x-device-category': device },
    payload: { tenantSlug: tenant.slug, userLoginId, password, name: 'Lee Student' },
  })
  expect(response.statusCode).toBe(201)
  return {
    id: response.json().user.id as number,
    userLoginId,
    password,
    access: cookie(response, 'svc_access_token'),
    refresh: cookie(response, 'svc_refresh_token'),
  }
}

async function login(tenant: TenantRow, userLoginId: string, password: string, device = 'WEB') {
  const response = await app.current.inject({
    method: 'POST',
    url: '/v1/login',
    headers: { 'x-device-category': device },
    payload: { userLoginId, password, customId: tenant.customId },
  })
  return { response, access: cookie(response, 'svc_access_token'), refresh: cookie(response, 'svc_refresh_token') }
}

const refresh = (token: string) =>
  app.current.inject({ method: 'POST', url: '/v1/refresh', cookies: { svc_refresh_token: token } })

/** A correctly signed token of tenant A that names a user of tenant B: RLS must keep B's row out of reach. */
async function crossTenantToken(role: Role = 'STUDENT') {
  const tenantA = await createTenant()
  const tenantB = await createTenant()
  const victim = await insertUser(tenantB, { role })
  const { access } = await issueTokenPair(
    app.current.tokenKeys,
    { userId: victim.id, tenantId: tenantA.id, tenantSlug: tenantA.slug, role, sid: randomUUID() },
    { accessSeconds: 600, refreshSeconds: 1200 },
  )
  const victimRow = () =>
    owner().selectFrom('users').select(['name', 'phone', 'avatarSeed', 'passwordHash']).where('id', '=', victim.id).executeTakeFirstOrThrow()
  return { headers: bearer(access.token), victim, before: await victimRow(), victimRow }
}

/** A write sent with a cross-tenant token: refused as an invalid token, and the other tenant's user is unchanged. */
async function expectCrossTenantWriteRefused(request: { method: 'PATCH' | 'POST'; url: string; payload: object }) {
  const { headers, before, victimRow } = await crossTenantToken()
  expectProblem(await app.current.inject({ ...request, headers }), 401, 'AUTH_003')
  expect(await victimRow()).toEqual(before)
}

describe('GET /v1/me', () => {
  it('returns the full user with the tenant URL fields taken from tenant data', async () => {
    const tenant = await createTenant()
    const onboarded = new Date('2026-01-02T03:04:05.000Z')
    const customDomain = `${tenant.slug}.example.com`
    await owner().updateTable('tenants').set({ customDomain, onboardingCompletedAt: onboarded }).where('id', '=', tenant.id).execute()
    const caller = await actor(app.current, tenant, 'INSTRUCTOR')

    const response = await app.current.inject({ method: 'GET', url: '/v1/me', headers: caller.headers })

    expect(response.statusCode).toBe(200)
    const seed = await owner().selectFrom('users').select('avatarSeed').where('id', '=', caller.user.id).executeTakeFirstOrThrow()
    expect(response.json()).toEqual({
      id: caller.user.id,
      userLoginId: caller.user.userLoginId,
      name: caller.user.name,
      phone: null,
      phoneVerifiedAt: null,
      email: caller.user.userLoginId,
      role: 'INSTRUCTOR',
      tenantSlug: tenant.slug,
      tenantId: tenant.id,
      tenantCustomId: tenant.customId,
      tenantCustomDomain: customDomain,
      tenantOnboardingCompletedAt: onboarded.toISOString(),
      avatarSeed: seed.avatarSeed,
    })
  })

  it('answers with a trailing slash too and accepts the access cookie', async () => {
    const student = await registeredStudent(await createTenant())
    const response = await app.current.inject({ method: 'GET', url: '/v1/me/', cookies: { svc_access_token: student.access } })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ id: student.id, userLoginId: student.userLoginId, tenantCustomDomain: null })
  })

  it('answers AUTH_002 without a token and AUTH_003 for a malformed one', async () => {
    expectProblem(await app.current.inject({ method: 'GET', url: '/v1/me' }), 401, 'AUTH_002')
    expectProblem(await app.current.inject({ method: 'GET', url: '/v1/me', headers: bearer('not-a-jwt') }), 401, 'AUTH_003')
  })

  it('never reads a user of another tenant, even with a token naming its id', async () => {
    const { headers } = await crossTenantToken()
    const response = await app.current.inject({ method: 'GET', url: '/v1/me', headers })
    expectProblem(response, 401, 'AUTH_003')
    expect(response.body).not.toContain('Test User')
  })
})

describe('PATCH /v1/me', () => {
  it('changes name and phone, normalising the phone, and answers the full user', async () => {
    const caller = await actor(app.current, await createTenant(), 'MANAGER')
    const response = await app.current.inject({
      method: 'PATCH',
      url: '/v1/me',
      headers: caller.headers,
      payload: { name: '김 매니저', phone: '010-1234-5678' },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ id: caller.user.id, name: '김 매니저', phone: '01012345678', role: 'MANAGER' })
    const me = await app.current.inject({ method: 'GET', url: '/v1/me', headers: caller.headers })
    expect(me.json()).toMatchObject({ name: '김 매니저', phone: '01012345678' })
  })

  it('changes only the fields given; null clears the phone; {} changes nothing', async () => {
    const caller = await actor(app.current, await createTenant(), 'STUDENT')
    const patch = (payload: object) =>
      app.current.inject({ method: 'PATCH', url: '/v1/me', headers: caller.headers, payload })

    expect((await patch({ phone: '+82 2 2345 6789' })).json()).toMatchObject({ name: 'Test User', phone: '0223456789' })
    expect((await patch({ name: 'Renamed' })).json()).toMatchObject({ name: 'Renamed', phone: '0223456789' })
    expect((await patch({ phone: null })).json()).toMatchObject({ name: 'Renamed', phone: null })
    const unchanged = await patch({})
    expect(unchanged.statusCode).toBe(200)
    expect(unchanged.json()).toMatchObject({ name: 'Renamed', phone: null })
  })

  it('answers INVALID_PHONE_NUMBER for a phone that is not a valid number and keeps the old one', async () => {
    const caller = await actor(app.current, await createTenant(), 'STUDENT')
    await app.current.inject({ method: 'PATCH', url: '/v1/me', headers: caller.headers, payload: { phone: '01012345678' } })
    for (const phone of ['12345', 'call me', '010-1234-567a', '+1 202 555 0143', '0'.repeat(21), `010-1234-5678${' '.repeat(30)}x`]) {
      const response = await app.current.inject({ method: 'PATCH', url: '/v1/me', headers: caller.headers, payload: { phone } })
      expectProblem(response, 400, 'INVALID_PHONE_NUMBER')
    }
    const me = await app.current.inject({ method: 'GET', url: '/v1/me', headers: caller.headers })
    expect(me.json().phone).toBe('01012345678')
  })

  it('rejects bodies outside the field limits with VALIDATION_FAILED', async () => {
    const caller = await actor(app.current, await createTenant(), 'STUDENT')
    const bodies = [
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { name: 42 },
      { phone: 1012345678 },
      { role: 'OWNER' },
      { name: 'ok', tenantId: 1 },
    ]
    for (const payload of bodies) {
      const response = await app.current.inject({ method: 'PATCH', url: '/v1/me', headers: caller.headers, payload })
      expectProblem(response, 400, 'VALIDATION_FAILED')
      expect(response.json().errors.length).toBeGreaterThan(0)
    }
    const accepted = await app.current.inject({
      method: 'PATCH',
      url: '/v1/me',
      headers: caller.headers,
      payload: { name: 'y'.repeat(100) },
    })
    expect(accepted.statusCode).toBe(200)
  })

  it('answers AUTH_002 without a token', async () => {
    expectProblem(await app.current.inject({ method: 'PATCH', url: '/v1/me', payload: { name: 'x' } }), 401, 'AUTH_002')
  })

  it('never changes a user of another tenant', async () => {
    await expectCrossTenantWriteRefused({ method: 'PATCH', url: '/v1/me', payload: { name: 'Hijacked', phone: '01099998888' } })
  })
})

describe('POST /v1/me/password', () => {
  it('changes the password and ends every other session of the user, keeping the current one', async () => {
    const tenant = await createTenant()
    const student = await registeredStudent(tenant, 'WEB')
    const mobile = await login(tenant, student.userLoginId, student.password, 'MOBILE')
    expect(mobile.response.statusCode).toBe(200)
    const newPassword = strongPassword()

    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/me/password',
      headers: bearer(mobile.access),
      payload: { currentPassword: student.password, newPassword },
    })

    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    // The other session (WEB) ends at once: its access token is blacklisted, its refresh token reports why.
    expectProblem(await app.current.inject({ method: 'GET', url: '/v1/me', headers: bearer(student.access) }), 401, 'AUTH_004')
    expectProblem(await refresh(student.refresh), 401, 'AUTH_007')
    const reasons = await owner().selectFrom('sessionRevocations').select('reason').where('tenantId', '=', tenant.id).execute()
    expect(reasons.map((row) => row.reason)).toEqual(['PASSWORD_CHANGED'])
    // The session that changed it stays.
    expect((await app.current.inject({ method: 'GET', url: '/v1/me', headers: bearer(mobile.access) })).statusCode).toBe(200)
    expect((await refresh(mobile.refresh)).statusCode).toBe(200)
    // Only the new password signs in now.
    expectProblem((await login(tenant, student.userLoginId, student.password, 'TABLET')).response, 401, 'AUTH_001')
    expect((await login(tenant, student.userLoginId, newPassword, 'TABLET')).response.statusCode).toBe(200)
  })

  it('answers AUTH_013 for a wrong current password and changes nothing', async () => {
    const tenant = await createTenant()
    const student = await registeredStudent(tenant, 'WEB')
    const mobile = await login(tenant, student.userLoginId, student.password, 'MOBILE')
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/me/password',
      headers: bearer(mobile.access),
      payload: { currentPassword: `${student.password}x`, newPassword: strongPassword() },
    })
    expectProblem(response, 400, 'AUTH_013')
    expect((await app.current.inject({ method: 'GET', url: '/v1/me', headers: bearer(student.access) })).statusCode).toBe(200)
    expect((await login(tenant, student.userLoginId, student.password, 'TABLET')).response.statusCode).toBe(200)
  })

  it('answers AUTH_012 naming the rule when the new password breaks the policy', async () => {
    const student = await registeredStudent(await createTenant())
    const cases: Array<[string, RegExp]> = [
      ['short1', /at least 8/],
      ['onlyletters', /digit/],
      ['password1', /common/],
      [`${student.userLoginId}9`, /login id/],
    ]
    for (const [newPassword, detail] of cases) {
      const response = await app.current.inject({
        method: 'POST',
        url: '/v1/me/password',
        headers: bearer(student.access),
        payload: { currentPassword: student.password, newPassword },
      })
      expectProblem(response, 400, 'AUTH_012')
      expect(response.json().detail).toMatch(detail)
    }
  })

  it('rejects malformed bodies with VALIDATION_FAILED', async () => {
    const caller = await actor(app.current, await createTenant(), 'STUDENT')
    for (const payload of [{}, { currentPassword: 'Abcdefg1' }, { currentPassword: 'Abcdefg1', newPassword: 12345678 }, { currentPassword: 'a', newPassword: 'Abcdefg12', extra: true }]) {
      const response = await app.current.inject({ method: 'POST', url: '/v1/me/password', headers: caller.headers, payload })
      expectProblem(response, 400, 'VALIDATION_FAILED')
    }
  })

  it('answers AUTH_002 without a token', async () => {
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/me/password',
      payload: { currentPassword: 'Abcdefg1', newPassword: strongPassword() },
    })
    expectProblem(response, 401, 'AUTH_002')
  })

  it('never changes the password of a user of another tenant', async () => {
    await expectCrossTenantWriteRefused({
      method: 'POST',
      url: '/v1/me/password',
      payload: { currentPassword: 'anything1', newPassword: strongPassword() },
    })
  })
})

describe('PATCH /v1/me/avatar', () => {
  it('sets the given seed', async () => {
    const caller = await actor(app.current, await createTenant(), 'INSTRUCTOR')
    const avatarSeed = `Seed_${randomBytes(4).toString('hex')}-x`
    const response = await app.current.inject({ method: 'PATCH', url: '/v1/me/avatar', headers: caller.headers, payload: { avatarSeed } })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ avatarSeed })
    expect((await app.current.inject({ method: 'GET', url: '/v1/me', headers: caller.headers })).json().avatarSeed).toBe(avatarSeed)
  })

  it('generates a new random seed when none is given', async () => {
    const caller = await actor(app.current, await createTenant(), 'STUDENT')
    const before = (await app.current.inject({ method: 'GET', url: '/v1/me', headers: caller.headers })).json().avatarSeed
    const first = await app.current.inject({ method: 'PATCH', url: '/v1/me/avatar', headers: caller.headers, payload: {} })
    const second = await app.current.inject({ method: 'PATCH', url: '/v1/me/avatar', headers: caller.headers, payload: {} })
    expect(first.statusCode).toBe(200)
    const seeds = [before, first.json().avatarSeed, second.json().avatarSeed]
    for (const seed of seeds.slice(1)) expect(seed).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    expect(new Set(seeds).size).toBe(3)
    expect((await app.current.inject({ method: 'GET', url: '/v1/me', headers: caller.headers })).json().avatarSeed).toBe(seeds[2])
  })

  it('refuses the JSON body null like every other body that is not an object', async () => {
    const caller = await actor(app.current, await createTenant(), 'STUDENT')
    const before = (await app.current.inject({ method: 'GET', url: '/v1/me', headers: caller.headers })).json().avatarSeed
    for (const payload of ['null', '"seed"', '[]', '7']) {
      const response = await injectJsonText(app.current, { method: 'PATCH', url: '/v1/me/avatar', headers: caller.headers }, payload)
      expectProblem(response, 400, 'VALIDATION_FAILED')
    }
    expect((await app.current.inject({ method: 'GET', url: '/v1/me', headers: caller.headers })).json().avatarSeed).toBe(before)
  })

  it('treats a request without a body as "generate a new seed"', async () => {
    const caller = await actor(app.current, await createTenant(), 'STUDENT')
    const response = await app.current.inject({ method: 'PATCH', url: '/v1/me/avatar', headers: caller.headers })
    expect(response.statusCode).toBe(200)
    expect(response.json().avatarSeed).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
  })

  it('rejects seeds outside 1-64 of [A-Za-z0-9_-] with VALIDATION_FAILED', async () => {
    const caller = await actor(app.current, await createTenant(), 'STUDENT')
    for (const avatarSeed of ['', 'has space', 'x'.repeat(65), 'slash/seed', 'émoji', 7]) {
      const response = await app.current.inject({ method: 'PATCH', url: '/v1/me/avatar', headers: caller.headers, payload: { avatarSeed } })
      expectProblem(response, 400, 'VALIDATION_FAILED')
    }
    const extra = await app.current.inject({ method: 'PATCH', url: '/v1/me/avatar', headers: caller.headers, payload: { seed: 'abc' } })
    expectProblem(extra, 400, 'VALIDATION_FAILED')
    const longest = await app.current.inject({ method: 'PATCH', url: '/v1/me/avatar', headers: caller.headers, payload: { avatarSeed: 'a'.repeat(64) } })
    expect(longest.statusCode).toBe(200)
  })

  it('answers AUTH_002 without a token', async () => {
    expectProblem(await app.current.inject({ method: 'PATCH', url: '/v1/me/avatar', payload: {} }), 401, 'AUTH_002')
  })

  it('never changes the avatar of a user of another tenant', async () => {
    await expectCrossTenantWriteRefused({ method: 'PATCH', url: '/v1/me/avatar', payload: { avatarSeed: 'stolen' } })
  })
})
