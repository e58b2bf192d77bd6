import { describe, expect, it } from 'vitest'
import { createTenant } from '../../support/fixtures.js'
import { useTestApp } from '../../support/helper.js'
import { expectProblem, seedSenderSetting, senderRow, signedApproval, TEST_HMAC_SECRET, type SignedCall } from '../sms-fixtures.js'
import { createPendingSenderTenant, uniqueSenderNumber } from '../sender-approval-fixtures.js'
import { formatHyphenated } from '../../../lib/sms/phone.js'
import { academy } from '../../support/staff-fixtures.js'

const SEEDED_AT = new Date('2020-01-02T00:00:00Z')

describe('PATCH /internal/sms/sender-settings/{tenantSlug}/approval', () => {
  const app = useTestApp({ env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })
  const call = (signed: SignedCall) => app.current.inject(signedApproval(signed))

  it('approves a PENDING row: approvedAt set, version + 1, the full sender setting answered', async () => {
    const tenant = await createPendingSenderTenant()
    const before = Date.now()
    const response = await call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED' } })
    expect(response.statusCode).toBe(200)
    const row = await senderRow(tenant)
    expect(row).toMatchObject({ registrationStatus: 'APPROVED', rejectionReason: null, rejectedAt: null, version: 1 })
    expect(row!.approvedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000)
    expect(response.json()).toEqual({
      id: row!.id,
      provider: 'extsms',
      senderNumber: formatHyphenated(tenant.senderNumber),
      registrationStatus: 'APPROVED',
      rejectionReason: null,
      approvedAt: row!.approvedAt!.toISOString(),
      rejectedAt: null,
      createdAt: row!.createdAt.toISOString(),
      updatedAt: row!.updatedAt.toISOString(),
    })
  })

  it('approves a REJECTED row and clears the rejection', async () => {
    const tenant = await createTenant()
    await seedSenderSetting(tenant, { senderNumber: uniqueSenderNumber(), registrationStatus: 'REJECTED', rejectionReason: 'no', rejectedAt: SEEDED_AT })
    const response = await call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED', rejectionReason: 'ignored' } })
    expect(response.json()).toMatchObject({ registrationStatus: 'APPROVED', rejectionReason: null, rejectedAt: null })
    expect(response.json().approvedAt).not.toBeNull()
  })

  it('approving an APPROVED row refreshes approvedAt', async () => {
    const tenant = await createTenant()
    await seedSenderSetting(tenant, { senderNumber: uniqueSenderNumber(), registrationStatus: 'APPROVED', approvedAt: SEEDED_AT })
    const response = await call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED' } })
    expect(response.json().registrationStatus).toBe('APPROVED')
    expect(new Date(response.json().approvedAt).getTime()).toBeGreaterThan(SEEDED_AT.getTime())
    expect((await senderRow(tenant))?.version).toBe(1)
  })

  it.each(['PENDING', 'APPROVED', 'REJECTED'] as const)('rejects a %s row with a reason: rejectionReason and rejectedAt set, approvedAt cleared', async (from) => {
    const tenant = await createTenant()
    await seedSenderSetting(tenant, {
      senderNumber: uniqueSenderNumber(),
      registrationStatus: from,
      approvedAt: from === 'APPROVED' ? SEEDED_AT : null,
      rejectedAt: from === 'REJECTED' ? SEEDED_AT : null,
      rejectionReason: from === 'REJECTED' ? 'old reason' : null,
    })
    const response = await call({ slug: tenant.slug, body: { registrationStatus: 'REJECTED', rejectionReason: '  번호 명의 불일치  ' } })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ registrationStatus: 'REJECTED', rejectionReason: '번호 명의 불일치', approvedAt: null })
    expect(new Date(response.json().rejectedAt).getTime()).toBeGreaterThan(SEEDED_AT.getTime())
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'REJECTED', version: 1 })
  })

  it.each([
    ['missing', { registrationStatus: 'REJECTED' }],
    ['null', { registrationStatus: 'REJECTED', rejectionReason: null }],
    ['empty', { registrationStatus: 'REJECTED', rejectionReason: '' }],
    ['blank', { registrationStatus: 'REJECTED', rejectionReason: ' \t\n ' }],
  ])('refuses REJECTED with a %s reason (REJECTION_REASON_REQUIRED) and changes nothing', async (_case, body) => {
    const tenant = await createPendingSenderTenant()
    expectProblem(await call({ slug: tenant.slug, body }), 400, 'REJECTION_REASON_REQUIRED')
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  it.each(['PENDING', 'NOT_CONFIGURED', 'approved', 'CANCELLED', ''])('refuses registrationStatus %j (APPROVAL_STATUS_INVALID)', async (registrationStatus) => {
    const tenant = await createPendingSenderTenant()
    expectProblem(await call({ slug: tenant.slug, body: { registrationStatus } }), 400, 'APPROVAL_STATUS_INVALID')
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  // APPROVAL_STATUS_INVALID: a status that is not APPROVED or REJECTED, absent or of another type included.
  it.each([
    ['no registrationStatus', { rejectionReason: 'x' }],
    ['an empty body object', {}],
    ['a null status', { registrationStatus: null }],
    ['a non-string status', { registrationStatus: 1 }],
  ])('refuses %s with APPROVAL_STATUS_INVALID and changes nothing', async (_case, body) => {
    const tenant = await createPendingSenderTenant()
    expectProblem(await call({ slug: tenant.slug, body }), 400, 'APPROVAL_STATUS_INVALID')
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  it.each([
    ['an unknown property', { registrationStatus: 'APPROVED', note: 'x' }],
    ['a reason over 500 characters', { registrationStatus: 'REJECTED', rejectionReason: 'x'.repeat(501) }],
    ['an array body', ['APPROVED']],
  ])('refuses %s with VALIDATION_FAILED', async (_case, body) => {
    const tenant = await createPendingSenderTenant()
    expectProblem(await call({ slug: tenant.slug, body }), 400, 'VALIDATION_FAILED')
  })

  it.each([
    ['malformed JSON', '{"registrationStatus": "APPROVED"'],
    ['an empty body', ''],
  ])('refuses a signed request with %s with VALIDATION_FAILED, never 500', async (_case, body) => {
    const tenant = await createPendingSenderTenant()
    expectProblem(await call({ slug: tenant.slug, body }), 400, 'VALIDATION_FAILED')
  })

  it('answers SENDER_SETTING_NOT_FOUND for a tenant without a row, and creates none', async () => {
    const tenant = await createTenant()
    expectProblem(await call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED' } }), 404, 'SENDER_SETTING_NOT_FOUND')
    expect(await senderRow(tenant)).toBeUndefined()
  })

  it('answers TENANT_NOT_FOUND for an unknown slug', async () => {
    expectProblem(await call({ slug: 'no-such-tenant-anywhere', body: { registrationStatus: 'APPROVED' } }), 404, 'TENANT_NOT_FOUND')
  })

  it("changes only the named tenant's row", async () => {
    const target = await createPendingSenderTenant()
    const bystander = await createPendingSenderTenant()
    await call({ slug: target.slug, body: { registrationStatus: 'APPROVED' } })
    expect(await senderRow(bystander)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  it('feeds the staff views and the PUT state table', async () => {
    const { tenant, owner, instructor } = await academy(app.current)
    const digits = uniqueSenderNumber()
    await app.current.inject({ method: 'PUT', url: '/v1/sms/sender-setting', headers: owner.headers, payload: { senderNumber: formatHyphenated(digits) } })
    await call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED' } })
    const status = await app.current.inject({ method: 'GET', url: '/v1/sms/sender-setting/status', headers: instructor.headers })
    expect(status.json()).toEqual({ provider: 'extsms', registrationStatus: 'APPROVED' })

    const same = await app.current.inject({ method: 'PUT', url: '/v1/sms/sender-setting', headers: owner.headers, payload: { senderNumber: digits } })
    expect(same.json()).toMatchObject({ registrationStatus: 'APPROVED', senderNumber: formatHyphenated(digits) })
    const other = await app.current.inject({ method: 'PUT', url: '/v1/sms/sender-setting', headers: owner.headers, payload: { senderNumber: '1644-1234' } })
    expect(other.json()).toMatchObject({ registrationStatus: 'PENDING', senderNumber: '1644-1234', approvedAt: null })
  })
})
