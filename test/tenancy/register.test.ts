import { describe, expect, it } from 'vitest'
import type { DomainEvents } from '../../plugins/tenancy/domain-events.js'
import {
  decodeJwt,
  expectProblem,
  registerOwner,
  registerStudent,
  strongPassword,
  until,
  validBusinessNumber,
} from '../support/auth-fixtures.js'
import { createTenant, owner, unique } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

const FULL_USER_FIELDS = [
  'avatarSeed',
  'email',
  'id',
  'name',
  'phone',
  'phoneVerifiedAt',
  'role',
  'tenantCustomDomain',
  'tenantCustomId',
  'tenantId',
  'tenantOnboardingCompletedAt',
  'tenantSlug',
  'userLoginId',
].sort()

const POLICY_VIOLATIONS: Array<[string, (loginId: string) => string, RegExp]> = [
  ['shorter than 8 characters', () => 'Ab3defg', /at least 8/],
  // 23 Hangul syllables (69 bytes) and 4 digits: 27 characters but 73 bytes.
  ['longer than 72 UTF-8 bytes', () => `${'가'.repeat(23)}1234`, /72 bytes/],
  ['without a letter', () => '1234567890!', /letter/],
  ['without a digit', () => 'NoDigitsHere!', /digit/],
  ['containing the login id in another case', (loginId) => `X9${loginId.toUpperCase()}`, /login id/],
  ['one of the most common passwords', () => 'Password123', /common/],
]

describe('POST /v1/register', () => {
  const app = useTestApp()

  it('creates a STUDENT in the tenant and answers 201 with both cookies and the full user', async () => {
    const tenant = await createTenant()
    const { response, accessToken, refreshToken, loginId } = await registerStudent(app.current, tenant.slug, {
      name: 'Park Student',
    })
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(Object.keys(body).sort()).toEqual(['accessExpiresIn', 'refreshExpiresIn', 'user'])
    expect(body.accessExpiresIn).toBe(3600)
    expect(body.refreshExpiresIn).toBe(604800)
    expect(Object.keys(body.user).sort()).toEqual(FULL_USER_FIELDS)
    expect(body.user).toMatchObject({
      userLoginId: loginId,
      name: 'Park Student',
      phone: null,
      email: loginId,
      role: 'STUDENT',
      tenantSlug: tenant.slug,
      tenantId: tenant.id,
      tenantCustomId: tenant.customId,
      tenantCustomDomain: null,
      tenantOnboardingCompletedAt: null,
    })
    expect(body.user.avatarSeed).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    expect(accessToken).not.toBe('')
    expect(refreshToken).not.toBe('')
    expect(response.body).not.toContain(accessToken)
    expect(response.body).not.toContain(refreshToken)

    const stored = await owner()
      .selectFrom('users')
      .select(['tenantId', 'role', 'passwordHash'])
      .where('id', '=', body.user.id)
      .executeTakeFirstOrThrow()
    expect(stored.tenantId).toBe(tenant.id)
    expect(stored.role).toBe('STUDENT')
    expect(stored.passwordHash).toMatch(/^\$2b\$04\$/)
  })

  it('opens a session like a login', async () => {
    const tenant = await createTenant()
    const { response, accessToken, bearer } = await registerStudent(app.current, tenant.slug)
    const claims = decodeJwt(accessToken)
    const session = await owner()
      .selectFrom('sessions')
      .select(['sid', 'userId', 'deviceCategory', 'accessJti'])
      .where('userId', '=', response.json().user.id)
      .executeTakeFirstOrThrow()
    expect(session).toEqual({ sid: claims.sid, userId: response.json().user.id, deviceCategory: 'WEB', accessJti: claims.jti })
    const sessions = await app.current.inject({ method: 'GET', url: '/v1/me/sessions', headers: bearer })
    expect(sessions.statusCode).toBe(200)
    expect(sessions.json().items).toMatchObject([{ sid: claims.sid, current: true }])
  })

  it('stores and returns the phone as digits only', async () => {
    const tenant = await createTenant()
    const { response } = await registerStudent(app.current, tenant.slug, { phone: '010-1234-5678' })
    expect(response.statusCode).toBe(201)
    expect(response.json().user.phone).toBe('01012345678')
  })

  it('accepts a null phone', async () => {
    const tenant = await createTenant()
    const { response } = await registerStudent(app.current, tenant.slug, { phone: null })
    expect(response.statusCode).toBe(201)
    expect(response.json().user.phone).toBeNull()
  })

  it('rejects an invalid phone with INVALID_PHONE_NUMBER and creates nothing', async () => {
    const tenant = await createTenant()
    const { response, loginId } = await registerStudent(app.current, tenant.slug, { phone: '12' })
    expectProblem(response, 400, 'INVALID_PHONE_NUMBER')
    const rows = await owner().selectFrom('users').select('id').where('userLoginId', '=', loginId).execute()
    expect(rows).toEqual([])
  })

  it('answers INVALID_PHONE_NUMBER, not VALIDATION_FAILED, for an over-long phone', async () => {
    const tenant = await createTenant()
    for (const phone of ['0'.repeat(21), '010-1234-5678'.repeat(5)]) {
      const { response, loginId } = await registerStudent(app.current, tenant.slug, { phone })
      expectProblem(response, 400, 'INVALID_PHONE_NUMBER')
      expect(await owner().selectFrom('users').select('id').where('userLoginId', '=', loginId).execute()).toEqual([])
    }
  })

  it('answers AUTH_009 for an unknown tenant slug', async () => {
    const { response } = await registerStudent(app.current, unique('no-such-tenant'))
    expectProblem(response, 404, 'AUTH_009')
  })

  it.each(['SUSPENDED', 'CLOSED'] as const)('answers AUTH_010 for a %s tenant', async (status) => {
    const tenant = await createTenant({ status })
    const { response, loginId } = await registerStudent(app.current, tenant.slug)
    expectProblem(response, 403, 'AUTH_010')
    const rows = await owner().selectFrom('users').select('id').where('userLoginId', '=', loginId).execute()
    expect(rows).toEqual([])
  })

  it('answers AUTH_011 when the login id is taken in the tenant, and allows it in another tenant', async () => {
    const tenant = await createTenant()
    const other = await createTenant()
    const loginId = unique('taken')
    expect((await registerStudent(app.current, tenant.slug, { userLoginId: loginId })).response.statusCode).toBe(201)
    expectProblem((await registerStudent(app.current, tenant.slug, { userLoginId: loginId })).response, 409, 'AUTH_011')
    expect((await registerStudent(app.current, other.slug, { userLoginId: loginId })).response.statusCode).toBe(201)
  })

  it('lets exactly one of several simultaneous registrations of one login id succeed', async () => {
    const tenant = await createTenant()
    const loginId = unique('race')
    const results = await Promise.all(
      Array.from({ length: 5 }, () => registerStudent(app.current, tenant.slug, { userLoginId: loginId })),
    )
    const statuses = results.map((result) => result.response.statusCode).sort()
    expect(statuses).toEqual([201, 409, 409, 409, 409])
    for (const result of results.filter((r) => r.response.statusCode === 409)) expectProblem(result.response, 409, 'AUTH_011')
    const rows = await owner().selectFrom('users').select('id').where('tenantId', '=', tenant.id).execute()
    expect(rows).toHaveLength(1)
  })

  it.each(POLICY_VIOLATIONS)('answers AUTH_012 for a password %s, naming the rule', async (_rule, password, detail) => {
    const tenant = await createTenant()
    const loginId = unique('policy')
    const { response } = await registerStudent(app.current, tenant.slug, { userLoginId: loginId, password: password(loginId) })
    expect(expectProblem(response, 400, 'AUTH_012').detail).toMatch(detail)
  })

  it('accepts a Hangul password of exactly 72 bytes', async () => {
    const tenant = await createTenant()
    const { response } = await registerStudent(app.current, tenant.slug, { password: `${'학'.repeat(23)}123` })
    expect(response.statusCode).toBe(201)
  })
})

describe('POST /v1/register/owner', () => {
  const app = useTestApp()

  it('creates the tenant, the OWNER and the owner-directory entry and answers 201 with the full user', async () => {
    const businessNumber = validBusinessNumber({ hyphens: true })
    const { response, loginId, accessToken, refreshToken } = await registerOwner(app.current, {
      instituteName: 'Seoul Science Academy',
      businessRegistrationNumber: businessNumber,
      name: 'Choi Owner',
    })
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(Object.keys(body).sort()).toEqual(['accessExpiresIn', 'refreshExpiresIn', 'user'])
    expect(Object.keys(body.user).sort()).toEqual(FULL_USER_FIELDS)
    expect(body.user).toMatchObject({ userLoginId: loginId, email: loginId, name: 'Choi Owner', role: 'OWNER', phone: null })
    expect(body.user.tenantSlug).toMatch(/^seoul-science-academy-[a-z0-9]+$/)
    expect(body.user.tenantCustomId).toMatch(/^[A-Z0-9]{4,20}$/)
    expect(response.body).not.toContain(accessToken)
    expect(response.body).not.toContain(refreshToken)

    const tenant = await owner()
      .selectFrom('tenants')
      .select(['id', 'slug', 'customId', 'name', 'status', 'businessRegistrationNumber'])
      .where('id', '=', body.user.tenantId)
      .executeTakeFirstOrThrow()
    expect(tenant).toEqual({
      id: body.user.tenantId,
      slug: body.user.tenantSlug,
      customId: body.user.tenantCustomId,
      name: 'Seoul Science Academy',
      status: 'ACTIVE',
      businessRegistrationNumber: businessNumber.replaceAll('-', ''),
    })
    const user = await owner()
      .selectFrom('users')
      .select(['tenantId', 'role'])
      .where('id', '=', body.user.id)
      .executeTakeFirstOrThrow()
    expect(user).toEqual({ tenantId: tenant.id, role: 'OWNER' })
    const entry = await owner()
      .selectFrom('ownerDirectory')
      .select(['tenantId', 'userId'])
      .where('userLoginId', '=', loginId)
      .executeTakeFirstOrThrow()
    expect(entry).toEqual({ tenantId: tenant.id, userId: body.user.id })
  })

  it('opens a session, and the owner can sign in again through root entry', async () => {
    const { response, loginId, password, bearer } = await registerOwner(app.current)
    const sessions = await app.current.inject({ method: 'GET', url: '/v1/me/sessions', headers: bearer })
    expect(sessions.json().items).toHaveLength(1)
    const again = await app.current.inject({ method: 'POST', url: '/v1/login', payload: { userLoginId: loginId, password } })
    expect(again.statusCode).toBe(200)
    expect(again.json().user).toEqual({
      id: response.json().user.id,
      userLoginId: loginId,
      name: 'Kim Owner',
      role: 'OWNER',
      tenantSlug: response.json().user.tenantSlug,
    })
  })

  it('gives every tenant its own slug and customId', async () => {
    const [first, second] = await Promise.all([registerOwner(app.current), registerOwner(app.current)])
    expect(first!.user.tenantSlug).not.toBe(second!.user.tenantSlug)
    expect(first!.user.tenantCustomId).not.toBe(second!.user.tenantCustomId)
  })

  it.each([
    ['a wrong check digit', (valid: string) => `${valid.slice(0, 9)}${(Number(valid[9]) + 1) % 10}`],
    ['nine digits', (valid: string) => valid.slice(0, 9)],
    ['letters', () => '12a-81-00998'],
  ])('rejects a business registration number with %s and creates no tenant', async (_case, mutate) => {
    const loginId = unique('badbrn')
    const { response } = await registerOwner(app.current, {
      businessRegistrationNumber: mutate(validBusinessNumber()),
      userLoginId: loginId,
    })
    const problem = expectProblem(response, 400, 'VALIDATION_FAILED')
    expect(problem.errors).toEqual([{ field: 'body.businessRegistrationNumber', message: expect.any(String) }])
    expect(await owner().selectFrom('ownerDirectory').select('tenantId').where('userLoginId', '=', loginId).execute()).toEqual([])
  })

  it('answers AUTH_019 for a business registration number already registered, however it is written', async () => {
    const number = validBusinessNumber()
    expect((await registerOwner(app.current, { businessRegistrationNumber: number })).response.statusCode).toBe(201)
    const hyphenated = `${number.slice(0, 3)}-${number.slice(3, 5)}-${number.slice(5)}`
    const loginId = unique('dupbrn')
    const { response } = await registerOwner(app.current, { businessRegistrationNumber: hyphenated, userLoginId: loginId })
    expectProblem(response, 409, 'AUTH_019')
    const tenants = await owner().selectFrom('tenants').select('id').where('businessRegistrationNumber', '=', number).execute()
    expect(tenants).toHaveLength(1)
    expect(await owner().selectFrom('users').select('id').where('userLoginId', '=', loginId).execute()).toEqual([])
  })

  it('answers AUTH_011 for a login id another owner already has', async () => {
    const first = await registerOwner(app.current)
    const number = validBusinessNumber()
    const { response } = await registerOwner(app.current, { userLoginId: first.loginId, businessRegistrationNumber: number })
    expectProblem(response, 409, 'AUTH_011')
    expect(await owner().selectFrom('tenants').select('id').where('businessRegistrationNumber', '=', number).execute()).toEqual([])
  })

  it('rolls back the whole registration when a simultaneous one takes the login id first', async () => {
    const loginId = unique('owner-race')
    const numbers = Array.from({ length: 4 }, () => validBusinessNumber())
    const results = await Promise.all(
      numbers.map((number) => registerOwner(app.current, { userLoginId: loginId, businessRegistrationNumber: number })),
    )
    expect(results.map((result) => result.response.statusCode).sort()).toEqual([201, 409, 409, 409])
    for (const result of results.filter((r) => r.response.statusCode === 409)) expectProblem(result.response, 409, 'AUTH_011')
    // Losers leave no tenant behind: exactly one of the four numbers was registered.
    const tenants = await owner().selectFrom('tenants').select('id').where('businessRegistrationNumber', 'in', numbers).execute()
    expect(tenants).toHaveLength(1)
    const owners = await owner().selectFrom('users').select('tenantId').where('userLoginId', '=', loginId).execute()
    expect(owners).toEqual([{ tenantId: tenants[0]!.id }])
  })

  it('answers AUTH_012 for a password that breaks the policy', async () => {
    const loginId = unique('owner-policy')
    const { response } = await registerOwner(app.current, { userLoginId: loginId, password: `${loginId}1` })
    expect(expectProblem(response, 400, 'AUTH_012').detail).toMatch(/login id/)
  })

  it('delivers OwnerRegisteredEvent after commit, with the committed tenant and owner visible', async () => {
    const seen: Array<{ event: DomainEvents['OwnerRegisteredEvent']; tenantVisible: boolean; ownerVisible: boolean; entryVisible: boolean }> = []
    const unsubscribe = app.current.events.subscribe('OwnerRegisteredEvent', async (event) => {
      // A separate connection sees only committed rows.
      const [tenant, user, entry] = await Promise.all([
        owner().selectFrom('tenants').select('id').where('id', '=', event.tenantId).executeTakeFirst(),
        owner().selectFrom('users').select('role').where('id', '=', event.ownerUserId).executeTakeFirst(),
        owner().selectFrom('ownerDirectory').select('userId').where('userId', '=', event.ownerUserId).executeTakeFirst(),
      ])
      seen.push({ event, tenantVisible: tenant !== undefined, ownerVisible: user?.role === 'OWNER', entryVisible: entry !== undefined })
    })
    try {
      const started = new Date()
      const { user } = await registerOwner(app.current)
      await until(() => seen.some((entry) => entry.event.tenantId === user.tenantId))
      const delivered = seen.filter((entry) => entry.event.tenantId === user.tenantId)
      expect(delivered).toHaveLength(1)
      expect(delivered[0]).toEqual({
        event: { tenantId: user.tenantId, tenantSlug: user.tenantSlug, ownerUserId: user.id, occurredAt: expect.any(Date) },
        tenantVisible: true,
        ownerVisible: true,
        entryVisible: true,
      })
      expect(delivered[0]!.event.occurredAt.getTime()).toBeGreaterThanOrEqual(started.getTime())
    } finally {
      unsubscribe()
    }
  })

  it('still answers 201 when subscribers throw or reject, and other subscribers still get the event', async () => {
    const received: number[] = []
    const unsubscribers = [
      app.current.events.subscribe('OwnerRegisteredEvent', () => {
        throw new Error('subscriber failed synchronously')
      }),
      app.current.events.subscribe('OwnerRegisteredEvent', async () => {
        throw new Error('subscriber failed asynchronously')
      }),
      app.current.events.subscribe('OwnerRegisteredEvent', (event) => {
        received.push(event.tenantId)
      }),
    ]
    try {
      const { response, user } = await registerOwner(app.current)
      expect(response.statusCode).toBe(201)
      await until(() => received.includes(user.tenantId))
    } finally {
      for (const unsubscribe of unsubscribers) unsubscribe()
    }
  })

  it('publishes nothing for a registration that fails', async () => {
    const received: DomainEvents['OwnerRegisteredEvent'][] = []
    const unsubscribe = app.current.events.subscribe('OwnerRegisteredEvent', (event) => {
      received.push(event)
    })
    try {
      const taken = await registerOwner(app.current)
      await until(() => received.some((event) => event.tenantId === taken.user.tenantId))
      received.length = 0
      const failed = await registerOwner(app.current, { businessRegistrationNumber: taken.businessNumber })
      expectProblem(failed.response, 409, 'AUTH_019')
      // A later registration's event arriving proves the failed one had its chance to publish.
      const later = await registerOwner(app.current)
      await until(() => received.some((event) => event.tenantId === later.user.tenantId))
      expect(received.map((event) => event.tenantId)).toEqual([later.user.tenantId])
    } finally {
      unsubscribe()
    }
  })
})

describe('registration input validation', () => {
  const app = useTestApp()
  const huge = 'x'.repeat(60_000)

  type Body = Record<string, unknown>
  const studentBody = (tenantSlug: string): Body => ({
    tenantSlug,
    userLoginId: unique('v'),
    password: strongPassword(),
    name: 'Valid Name',
    phone: '010-1234-5678',
  })
  const ownerBody = (): Body => ({
    instituteName: 'Valid Academy',
    businessRegistrationNumber: validBusinessNumber(),
    userLoginId: unique('v'),
    password: strongPassword(),
    name: 'Valid Name',
  })

  // [field, case, bad value]; `undefined` removes the field.
  const stringFieldCases = (field: string, maxLength: number): Array<[string, string, unknown]> => [
    [field, 'missing', undefined],
    [field, 'null', null],
    [field, 'a number', 42],
    [field, 'a boolean', true],
    [field, 'an array', ['a']],
    [field, 'an object', { nested: 'a' }],
    [field, 'empty', ''],
    [field, `${maxLength + 1} characters`, 'y'.repeat(maxLength + 1)],
    [field, '60,000 characters (under the 64 KiB body limit)', huge],
  ]
  // The account fields both registrations take, under the same rules.
  const accountFieldCases: Array<[string, string, unknown]> = [
    ...stringFieldCases('userLoginId', 50),
    ['userLoginId', 'with a space', 'has space'],
    ['userLoginId', 'with a NUL character', 'nul\u0000id'],
    ...stringFieldCases('password', 200),
    ...stringFieldCases('name', 100),
  ]
  const without = (body: Body, field: string, value: unknown): Body => {
    const copy = { ...body }
    if (value === undefined) delete copy[field]
    else copy[field] = value
    return copy
  }

  const expectFieldError = (response: Awaited<ReturnType<typeof app.current.inject>>, field: string) => {
    const problem = expectProblem(response, 400, 'VALIDATION_FAILED')
    expect((problem.errors as Array<{ field: string }>).map((error) => error.field)).toContain(`body.${field}`)
  }

  it.each([
    ...stringFieldCases('tenantSlug', 63),
    ['tenantSlug', 'with a NUL character', 'nul\u0000slug'],
    ...accountFieldCases,
    ['name', 'blank', '   '],
    ['name', 'with a control character', 'Lee\u0007'],
    ['phone', 'a number', 1012345678],
    ['phone', 'an object', { nested: 'a' }],
  ])('POST /v1/register rejects %s %s with VALIDATION_FAILED', async (field, _case, value) => {
    const tenant = await createTenant()
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/register',
      payload: without(studentBody(tenant.slug), field, value) as object,
    })
    expectFieldError(response, field)
  })

  it.each([
    ...stringFieldCases('instituteName', 100),
    ['instituteName', 'blank', '   '],
    ['instituteName', 'with a NUL character', 'Academy\u0000'],
    ...stringFieldCases('businessRegistrationNumber', 20),
    ...accountFieldCases,
    ['name', 'with a NUL character', 'Kim\u0000'],
  ])('POST /v1/register/owner rejects %s %s with VALIDATION_FAILED', async (field, _case, value) => {
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/register/owner',
      payload: without(ownerBody(), field, value) as object,
    })
    expectFieldError(response, field)
  })

  it.each(['/v1/register', '/v1/register/owner'])('%s rejects unknown properties', async (url) => {
    const tenant = await createTenant()
    const body = url === '/v1/register' ? studentBody(tenant.slug) : ownerBody()
    const response = await app.current.inject({ method: 'POST', url, payload: { ...body, role: 'OWNER' } })
    const problem = expectProblem(response, 400, 'VALIDATION_FAILED')
    expect(problem.errors).toEqual([{ field: 'body.role', message: 'is not an allowed property' }])
  })

  it.each(['/v1/register', '/v1/register/owner'])('%s rejects malformed JSON, non-objects and non-JSON bodies', async (url) => {
    const json = { 'content-type': 'application/json' }
    expectProblem(await app.current.inject({ method: 'POST', url, headers: json, payload: '{"userLoginId":' }), 400, 'VALIDATION_FAILED')
    expectProblem(await app.current.inject({ method: 'POST', url, headers: json, payload: '[]' }), 400, 'VALIDATION_FAILED')
    expectProblem(await app.current.inject({ method: 'POST', url, headers: json, payload: 'null' }), 400, 'VALIDATION_FAILED')
    expectProblem(await app.current.inject({ method: 'POST', url, headers: json, payload: '' }), 400, 'VALIDATION_FAILED')
    expectProblem(
      await app.current.inject({ method: 'POST', url, headers: { 'content-type': 'text/plain' }, payload: 'userLoginId=x' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    )
  })
})
