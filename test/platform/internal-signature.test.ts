import { beforeAll, describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { createTenant, owner, type TenantRow } from '../support/fixtures.js'
import { itConcurrent, useTestApp } from '../support/helper.js'
import { expectProblem, seedSenderSetting, senderRow, signedApproval, TEST_HMAC_SECRET, type SignedCall } from '../sms/sms-fixtures.js'
import { createPendingSenderTenant, uniqueSenderNumber } from '../sms/sender-approval-fixtures.js'
import { academy } from '../support/staff-fixtures.js'

const APPROVE = { registrationStatus: 'APPROVED' }
const now = () => Math.floor(Date.now() / 1000)

describe('internal signature plugin', () => {
  const app = useTestApp({ env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })
  let tenant: TenantRow

  beforeAll(async () => {
    tenant = await createPendingSenderTenant()
  })

  const send = (signed: SignedCall, change: (request: ReturnType<typeof signedApproval>) => void = () => undefined) => {
    const request = signedApproval(signed)
    change(request)
    return app.current.inject(request)
  }
  const refused = async (response: Awaited<ReturnType<typeof send>>) => expectProblem(response, 401, 'INTERNAL_SIGNATURE_INVALID')

  it('accepts a correctly signed call', async () => {
    // Not signed at "now": the next test signs the same call at now, and a signature is accepted only once.
    const response = await send({ slug: tenant.slug, body: APPROVE, timestamp: now() - 2 })
    expect(response.statusCode).toBe(200)
    expect(response.json().registrationStatus).toBe('APPROVED')
  })

  it.each([-290, 0, 290])('accepts a timestamp %i s from now', async (offset) => {
    expect((await send({ slug: tenant.slug, body: APPROVE, timestamp: now() + offset })).statusCode).toBe(200)
  })

  it.each([
    ['stale by a little', () => now() - 310],
    ['stale by a day', () => now() - 86_400],
    ['from the future', () => now() + 310],
    ['in milliseconds', () => Date.now()],
    ['not a number', () => 'yesterday'],
    ['ISO formatted', () => new Date().toISOString()],
    ['negative', () => '-1'],
  ])('refuses a timestamp %s', async (_case, timestamp) => {
    await refused(await send({ slug: tenant.slug, body: APPROVE, timestamp: timestamp() }))
  })

  it.each(['x-tenant-slug', 'x-timestamp', 'x-signature'])('refuses a call without %s', async (name) => {
    const problem = await refused(await send({ slug: tenant.slug, body: APPROVE }, (request) => delete request.headers[name]))
    expect(problem.detail).toContain(name)
  })

  it('refuses a signature made with another secret, and leaves the row alone', async () => {
    const other = await createPendingSenderTenant()
    await refused(await send({ slug: other.slug, body: APPROVE, secret: 'some-other-secret-of-enough-length' }))
    expect(await senderRow(other)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  it('refuses a body changed after signing', async () => {
    await refused(
      await send({ slug: tenant.slug, body: APPROVE }, (request) => {
        request.payload = JSON.stringify({ registrationStatus: 'REJECTED', rejectionReason: 'forged' })
      }),
    )
    await refused(await send({ slug: tenant.slug, body: APPROVE }, (request) => (request.payload = `${request.payload} `)))
  })

  it('signs the method and the request target, query string included', async () => {
    await refused(await send({ slug: tenant.slug, body: APPROVE, method: 'POST' }, (request) => (request.method = 'PATCH')))
    await refused(await send({ slug: tenant.slug, body: APPROVE }, (request) => (request.url += '?note=1')))
    expect((await send({ slug: tenant.slug, body: APPROVE, query: '?note=1' })).statusCode).toBe(200)
  })

  it.each([
    ['in upper case', (signature: string) => signature.toUpperCase()],
    ['truncated', (signature: string) => signature.slice(0, 63)],
    ['with one digit changed', (signature: string) => `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`],
    ['as base64', (signature: string) => Buffer.from(signature, 'hex').toString('base64')],
  ])('refuses a signature %s', async (_case, mangle) => {
    await refused(await send({ slug: tenant.slug, body: APPROVE }, (request) => (request.headers['x-signature'] = mangle(request.headers['x-signature']!))))
  })

  it("refuses a call signed for another tenant with TENANT_MISMATCH, touching neither tenant's row", async () => {
    const other = await createTenant()
    const target = await createPendingSenderTenant()
    await seedSenderSetting(other, { senderNumber: '0311234567', registrationStatus: 'PENDING' })
    expectProblem(await send({ slug: target.slug, headerSlug: other.slug, body: APPROVE }), 403, 'TENANT_MISMATCH')
    expect(await senderRow(target)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
    expect(await senderRow(other)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  it('never accepts an end-user token in place of the signature', async () => {
    const { tenant: own, owner } = await academy(app.current)
    await seedSenderSetting(own, { senderNumber: '0212345678', registrationStatus: 'PENDING' })
    const url = `/internal/sms/sender-settings/${own.slug}/approval`
    await refused(await app.current.inject({ method: 'PATCH', url, headers: owner.headers, payload: APPROVE }))
    const token = owner.headers.authorization.replace('Bearer ', '')
    await refused(await app.current.inject({ method: 'PATCH', url, cookies: { svc_access_token: token }, payload: APPROVE }))
    await refused(
      await send({ slug: own.slug, body: APPROVE }, (request) => {
        delete request.headers['x-signature']
        request.headers.authorization = owner.headers.authorization
      }),
    )
    expect(await senderRow(own)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  it('answers 401 before anything about the body or the tenant', async () => {
    const badSignature = (request: ReturnType<typeof signedApproval>) => (request.headers['x-signature'] = '0'.repeat(64))
    await refused(await send({ slug: tenant.slug, body: '{"registrationStatus": ' }, badSignature))
    await refused(await send({ slug: tenant.slug, body: { registrationStatus: 'MAYBE' } }, badSignature))
    await refused(await send({ slug: 'no-such-tenant-anywhere', body: APPROVE }, badSignature))
    await refused(await send({ slug: tenant.slug, headerSlug: 'someone-else', body: APPROVE }, badSignature))
  })

  it('answers TENANT_NOT_FOUND only once the signature holds', async () => {
    expectProblem(await send({ slug: 'no-such-tenant-anywhere', body: APPROVE }), 404, 'TENANT_NOT_FOUND')
  })

  it('refuses an oversized body with 413', async () => {
    const body = { registrationStatus: 'REJECTED', rejectionReason: 'x'.repeat(20_000) }
    expectProblem(await send({ slug: tenant.slug, body }), 413, 'PAYLOAD_TOO_LARGE')
  })
})

describe('internal signature plugin: each signed call is accepted once', () => {
  const app = useTestApp({ env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })
  const sibling = useTestApp({ env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })
  const REJECT = { registrationStatus: 'REJECTED', rejectionReason: 'Certificate does not match the number' }

  it('refuses a captured REJECTED replayed over a later APPROVED, and the row stays APPROVED', async () => {
    const tenant = await createPendingSenderTenant()
    const captured = signedApproval({ slug: tenant.slug, body: REJECT, timestamp: now() - 5 })
    expect((await app.current.inject(captured)).statusCode).toBe(200)
    expect((await app.current.inject(signedApproval({ slug: tenant.slug, body: APPROVE }))).statusCode).toBe(200)
    const problem = expectProblem(await app.current.inject(captured), 401, 'INTERNAL_SIGNATURE_INVALID')
    expect(problem.detail).toMatch(/already/)
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'APPROVED', rejectionReason: null, version: 2 })
  })

  it('refuses the replay on another instance too (the used signature is shared through the database)', async () => {
    const tenant = await createPendingSenderTenant()
    const call = signedApproval({ slug: tenant.slug, body: APPROVE })
    expect((await app.current.inject(call)).statusCode).toBe(200)
    expectProblem(await sibling.current.inject(call), 401, 'INTERNAL_SIGNATURE_INVALID')
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'APPROVED', version: 1 })
  })

  itConcurrent('accepts exactly one of two concurrent replays', async () => {
    const tenant = await createPendingSenderTenant()
    const call = signedApproval({ slug: tenant.slug, body: REJECT })
    const answers = await Promise.all([app.current.inject(call), sibling.current.inject(call)])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 401])
    expectProblem(answers.find((answer) => answer.statusCode === 401)!, 401, 'INTERNAL_SIGNATURE_INVALID')
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'REJECTED', version: 1 })
  })

  it('does not use up the signature of a call that was refused, so the same call may be sent again', async () => {
    const tenant = await createTenant()
    const call = signedApproval({ slug: tenant.slug, body: APPROVE })
    expectProblem(await app.current.inject(call), 404, 'SENDER_SETTING_NOT_FOUND')
    await seedSenderSetting(tenant, { senderNumber: uniqueSenderNumber(), registrationStatus: 'PENDING' })
    expect((await app.current.inject(call)).statusCode).toBe(200)
  })

  it('purges used signatures once their window has passed, and keeps the others', async () => {
    const [expired, live] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')]
    await owner()
      .insertInto('usedInternalSignatures')
      .values([
        { signature: expired, expiresAt: new Date(Date.now() - 1000) },
        { signature: live, expiresAt: new Date(Date.now() + 300_000) },
      ])
      .execute()
    await app.current.purgeExpired()
    const left = await owner().selectFrom('usedInternalSignatures').select('signature').where('signature', 'in', [expired, live]).execute()
    expect(left.map((row) => row.signature)).toEqual([live])
  })
})

describe('internal signature plugin without SVC_INTERNAL_HMAC_SECRET', () => {
  const app = useTestApp()

  it('refuses every internal call, whatever it was signed with', async () => {
    const tenant = await createPendingSenderTenant()
    for (const secret of [TEST_HMAC_SECRET, '']) {
      const problem = expectProblem(await app.current.inject(signedApproval({ slug: tenant.slug, body: APPROVE, secret })), 401, 'INTERNAL_SIGNATURE_INVALID')
      expect(problem.detail).toMatch(/no signing secret/)
    }
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })
})

describe('internal signature plugin on a route without the signed parser', () => {
  const app = useTestApp({ extend: async (test) => {
        test.patch('/test/signed', { config: { access: 'internal-signed' } }, async () => ({ ok: true }))
      }, env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })

  it('fails closed rather than leave the body unsigned', async () => {
    const tenant = await createTenant()
    const response = await app.current.inject(signedApproval({ slug: tenant.slug, path: '/test/signed', body: APPROVE }))
    expectProblem(response, 500, 'INTERNAL_ERROR')
  })
})
