import { describe, expect, it } from 'vitest'
import { createTenant, owner as ownerDb } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { expectProblem, loginAs, seedSenderSetting, senderRow } from './sms-fixtures.js'
import { academy } from '../support/staff-fixtures.js'

const NOT_CONFIGURED = {
  id: null,
  provider: 'extsms',
  senderNumber: null,
  registrationStatus: 'NOT_CONFIGURED',
  rejectionReason: null,
  approvedAt: null,
  rejectedAt: null,
  createdAt: null,
  updatedAt: null,
}

describe('sender setting', () => {
  const app = useTestApp()

  const get = (headers: Record<string, string> = {}) =>
    app.current.inject({ method: 'GET', url: '/v1/sms/sender-setting', headers })
  const status = (headers: Record<string, string> = {}) =>
    app.current.inject({ method: 'GET', url: '/v1/sms/sender-setting/status', headers })
  const put = (headers: Record<string, string>, payload: unknown) =>
    app.current.inject({ method: 'PUT', url: '/v1/sms/sender-setting', headers, payload: payload as object })

  describe('GET /v1/sms/sender-setting', () => {
    it('answers the synthetic NOT_CONFIGURED setting when the tenant has no row', async () => {
      const { owner } = await academy(app.current)
      const response = await get(owner.headers)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual(NOT_CONFIGURED)
    })

    it('shows the stored row with the number hyphenated', async () => {
      const { tenant, owner } = await academy(app.current)
      const row = await seedSenderSetting(tenant, {
        senderNumber: '0212345678',
        registrationStatus: 'REJECTED',
        rejectionReason: 'document missing',
        rejectedAt: new Date('2026-02-03T04:05:06Z'),
      })
      expect((await get(owner.headers)).json()).toEqual({
        id: row.id,
        provider: 'extsms',
        senderNumber: '02-1234-5678',
        registrationStatus: 'REJECTED',
        rejectionReason: 'document missing',
        approvedAt: null,
        rejectedAt: '2026-02-03T04:05:06.000Z',
        createdAt: row.createdAt.toISOString(),
        updatedAt: '2026-01-01T00:00:00.000Z',
      })
    })

    it('works for an owner signed in through /v1/login with the access cookie', async () => {
      const tenant = await createTenant()
      const { accessToken } = await loginAs(app.current, tenant, 'OWNER')
      const response = await app.current.inject({
        method: 'GET',
        url: '/v1/sms/sender-setting',
        cookies: { svc_access_token: accessToken },
      })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual(NOT_CONFIGURED)
    })

    it('requires a token (AUTH_002)', async () => {
      expectProblem(await get(), 401, 'AUTH_002')
    })

    it.each(['manager', 'instructor', 'student'] as const)('refuses the %s (AUTH_008)', async (role) => {
      const people = await academy(app.current)
      expectProblem(await get(people[role].headers), 403, 'AUTH_008')
    })
  })

  describe('GET /v1/sms/sender-setting/status', () => {
    it.each(['owner', 'manager', 'instructor'] as const)('answers exactly {provider, registrationStatus} to the %s', async (role) => {
      const people = await academy(app.current)
      expect((await status(people[role].headers)).json()).toEqual({ provider: 'extsms', registrationStatus: 'NOT_CONFIGURED' })
      await seedSenderSetting(people.tenant, { senderNumber: '01012345678', registrationStatus: 'APPROVED', approvedAt: new Date() })
      const response = await status(people[role].headers)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ provider: 'extsms', registrationStatus: 'APPROVED' })
    })

    it('refuses a student (AUTH_008) and an anonymous caller (AUTH_002)', async () => {
      const { student } = await academy(app.current)
      expectProblem(await status(student.headers), 403, 'AUTH_008')
      expectProblem(await status(), 401, 'AUTH_002')
    })
  })

  describe('PUT /v1/sms/sender-setting', () => {
    it('creates a PENDING row from NOT_CONFIGURED, storing digits and showing them hyphenated', async () => {
      const { tenant, owner } = await academy(app.current)
      const response = await put(owner.headers, { senderNumber: '+82 2-1234-5678' })
      expect(response.statusCode).toBe(200)
      const row = await senderRow(tenant)
      expect(row).toMatchObject({ senderNumber: '0212345678', registrationStatus: 'PENDING', provider: 'extsms', version: 0 })
      expect(response.json()).toEqual({
        ...NOT_CONFIGURED,
        id: row!.id,
        senderNumber: '02-1234-5678',
        registrationStatus: 'PENDING',
        createdAt: row!.createdAt.toISOString(),
        updatedAt: row!.updatedAt.toISOString(),
      })
    })

    it.each([
      ['1588-1234', '15881234', '1588-1234'],
      ['010 1234 5678', '01012345678', '010-1234-5678'],
      ['031-123-4567', '0311234567', '031-123-4567'],
    ])('accepts %s, stores %s and shows %s', async (input, stored, shown) => {
      const { tenant, owner } = await academy(app.current)
      expect((await put(owner.headers, { senderNumber: input })).json().senderNumber).toBe(shown)
      expect((await senderRow(tenant))?.senderNumber).toBe(stored)
    })

    it.each([
      ['PENDING', {}],
      ['APPROVED', { approvedAt: new Date('2026-01-02T00:00:00Z') }],
      ['REJECTED', { rejectionReason: 'blurry certificate', rejectedAt: new Date('2026-01-02T00:00:00Z') }],
    ] as const)('moves %s to PENDING with the approval metadata cleared when the number differs', async (from, metadata) => {
      const { tenant, owner } = await academy(app.current)
      await seedSenderSetting(tenant, { senderNumber: '0212345678', registrationStatus: from, ...metadata })
      const response = await put(owner.headers, { senderNumber: '010-9876-5432' })
      expect(response.json()).toMatchObject({
        senderNumber: '010-9876-5432',
        registrationStatus: 'PENDING',
        rejectionReason: null,
        approvedAt: null,
        rejectedAt: null,
      })
      expect(response.json().updatedAt).not.toBe('2026-01-01T00:00:00.000Z')
      expect(await senderRow(tenant)).toMatchObject({ senderNumber: '01098765432', version: 1 })
    })

    it('moves REJECTED to PENDING with the approval metadata cleared for the same number', async () => {
      const { tenant, owner } = await academy(app.current)
      await seedSenderSetting(tenant, {
        senderNumber: '0212345678',
        registrationStatus: 'REJECTED',
        rejectionReason: 'blurry certificate',
        rejectedAt: new Date('2026-01-02T00:00:00Z'),
      })
      const response = await put(owner.headers, { senderNumber: '02-1234-5678' })
      expect(response.json()).toMatchObject({ registrationStatus: 'PENDING', rejectionReason: null, rejectedAt: null, approvedAt: null })
      expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', rejectionReason: null, rejectedAt: null, version: 1 })
    })

    it('keeps a PENDING row PENDING for the same number, clearing any leftover approval metadata', async () => {
      const { tenant, owner } = await academy(app.current)
      await seedSenderSetting(tenant, { senderNumber: '0212345678', registrationStatus: 'PENDING' })
      expect((await put(owner.headers, { senderNumber: '0212345678' })).json()).toMatchObject({ registrationStatus: 'PENDING' })
      // Nothing to change: no write, same version.
      expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })

      await seedLeftovers(tenant.id)
      const response = await put(owner.headers, { senderNumber: '02 1234 5678' })
      expect(response.json()).toMatchObject({ registrationStatus: 'PENDING', rejectionReason: null, approvedAt: null, rejectedAt: null })
      expect(await senderRow(tenant)).toMatchObject({ version: 1 })
    })

    it('leaves an APPROVED row unchanged for the same number (no write, same version)', async () => {
      const { tenant, owner } = await academy(app.current)
      const approvedAt = new Date('2026-01-02T00:00:00Z')
      await seedSenderSetting(tenant, { senderNumber: '15881234', registrationStatus: 'APPROVED', approvedAt })
      const response = await put(owner.headers, { senderNumber: '1588-1234' })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({
        senderNumber: '1588-1234',
        registrationStatus: 'APPROVED',
        approvedAt: approvedAt.toISOString(),
        updatedAt: '2026-01-01T00:00:00.000Z',
      })
      expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'APPROVED', version: 0 })
    })

    it('applies every one of concurrent PUTs: none is lost, the version counts each', async () => {
      const { tenant, owner } = await academy(app.current)
      const numbers = Array.from({ length: 8 }, (_, index) => `0101234000${index}`)
      const responses = await Promise.all(numbers.map((senderNumber) => put(owner.headers, { senderNumber })))
      expect(responses.map((response) => response.statusCode)).toEqual(numbers.map(() => 200))
      const row = await senderRow(tenant)
      // One insert (version 0) and seven updates on top of it, whatever their order.
      expect(row?.version).toBe(numbers.length - 1)
      expect(numbers).toContain(row?.senderNumber)
      const count = await rowCount(tenant.id)
      expect(count).toBe(1)
    })

    it.each([
      ['letters', 'call-me'],
      ['too short', '123'],
      ['too long', '010123456789'],
      ['over-long input', '02-1234-5678'.repeat(4)],
      ['a huge string', '0'.repeat(10_000)],
      ['empty', ''],
      ['a foreign number', '+1 202 555 0123'],
      ['an unassigned range', '02-0000-0000'],
    ])('refuses %s with INVALID_PHONE_NUMBER and writes nothing', async (_case, senderNumber) => {
      const { tenant, owner } = await academy(app.current)
      expectProblem(await put(owner.headers, { senderNumber }), 400, 'INVALID_PHONE_NUMBER')
      expect(await senderRow(tenant)).toBeUndefined()
    })

    it.each([
      ['a missing number', {}],
      ['a number as a number', { senderNumber: 212345678 }],
      ['an unknown property', { senderNumber: '0212345678', provider: 'mock' }],
    ])('refuses %s with VALIDATION_FAILED', async (_case, payload) => {
      const { owner } = await academy(app.current)
      expectProblem(await put(owner.headers, payload), 400, 'VALIDATION_FAILED')
    })

    it('refuses malformed JSON with VALIDATION_FAILED', async () => {
      const { owner } = await academy(app.current)
      const response = await app.current.inject({
        method: 'PUT',
        url: '/v1/sms/sender-setting',
        headers: { ...owner.headers, 'content-type': 'application/json' },
        payload: '{"senderNumber": ',
      })
      expectProblem(response, 400, 'VALIDATION_FAILED')
    })

    it.each(['manager', 'instructor', 'student'] as const)('refuses the %s (AUTH_008) without writing', async (role) => {
      const people = await academy(app.current)
      expectProblem(await put(people[role].headers, { senderNumber: '0212345678' }), 403, 'AUTH_008')
      expect(await senderRow(people.tenant)).toBeUndefined()
    })

    it('requires a token (AUTH_002)', async () => {
      expectProblem(await put({}, { senderNumber: '0212345678' }), 401, 'AUTH_002')
    })
  })

  describe('tenant isolation', () => {
    it("never shows or changes another tenant's row", async () => {
      const a = await academy(app.current)
      const b = await academy(app.current)
      await put(a.owner.headers, { senderNumber: '0212345678' })
      await seedSenderSetting(b.tenant, { senderNumber: '0311234567', registrationStatus: 'APPROVED', approvedAt: new Date() })

      expect((await get(a.owner.headers)).json()).toMatchObject({ senderNumber: '02-1234-5678', registrationStatus: 'PENDING' })
      expect((await get(b.owner.headers)).json()).toMatchObject({ senderNumber: '031-123-4567', registrationStatus: 'APPROVED' })

      await put(a.owner.headers, { senderNumber: '0311234567' })
      expect(await senderRow(b.tenant)).toMatchObject({ senderNumber: '0311234567', registrationStatus: 'APPROVED', version: 0 })
      expect(await senderRow(a.tenant)).toMatchObject({ senderNumber: '0311234567', registrationStatus: 'PENDING', version: 1 })
      expect((await status(b.manager.headers)).json()).toEqual({ provider: 'extsms', registrationStatus: 'APPROVED' })
    })
  })
})

async function seedLeftovers(tenantId: number): Promise<void> {
  await ownerDb()
    .updateTable('smsSenderSettings')
    .set({ rejectionReason: 'stale note', rejectedAt: new Date('2026-01-02T00:00:00Z') })
    .where('tenantId', '=', tenantId)
    .execute()
}

async function rowCount(tenantId: number): Promise<number> {
  const { count } = await ownerDb()
    .selectFrom('smsSenderSettings')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('tenantId', '=', tenantId)
    .executeTakeFirstOrThrow()
  return Number(count)
}
