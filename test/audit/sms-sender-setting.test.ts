import { describe, expect, it } from 'vitest'
import { formatHyphenated, maskPhone } from '../../lib/sms/phone.js'
import { storedAuditEvents, theAuditEvent } from './audit-fixtures.js'
import { uniqueAddress } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { createPendingSenderTenant, uniqueSenderNumber } from '../sms/sender-approval-fixtures.js'
import { expectProblem, senderRow, signedApproval, TEST_HMAC_SECRET, type SignedCall } from '../sms/sms-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

/** Neither the digits nor the hyphenated form of the number appear anywhere in an event's details. */
function expectNoWholeNumber(details: Record<string, unknown>, digits: string) {
  const text = JSON.stringify(details)
  expect(text).not.toContain(digits)
  expect(text).not.toContain(formatHyphenated(digits))
}

describe('audit events of the sender number', () => {
  const app = useTestApp({ env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })

  describe('SENDER_SETTING_CHANGED (PUT /v1/sms/sender-setting)', () => {
    const put = (who: Actor, senderNumber: string, options: { requestId?: string; address?: string } = {}) =>
      app.current.inject({
        method: 'PUT',
        url: '/v1/sms/sender-setting',
        payload: { senderNumber },
        remoteAddress: options.address ?? '127.0.0.1',
        headers: { ...who.headers, ...(options.requestId === undefined ? {} : { 'x-request-id': options.requestId }) },
      })

    it('records the owner asking for a number to be reviewed, the number masked', async () => {
      const { tenant, owner } = await academy(app.current)
      const digits = uniqueSenderNumber()
      const address = uniqueAddress()
      const response = await put(owner, formatHyphenated(digits), { requestId: 'req-sender-put', address })
      expect(response.statusCode).toBe(200)
      const event = await theAuditEvent(tenant, 'SENDER_SETTING_CHANGED')
      expect(event).toMatchObject({
        actorId: owner.user.id,
        targetType: 'SENDER_SETTING',
        targetId: String(response.json().id),
        requestId: 'req-sender-put',
        ipAddress: address,
      })
      expect(event.details).toEqual({ senderNumber: maskPhone(digits) })
      expectNoWholeNumber(event.details, digits)
    })

    it('records a change of number, and nothing for a PUT that changes nothing', async () => {
      const { tenant, owner } = await academy(app.current)
      const first = uniqueSenderNumber()
      const second = uniqueSenderNumber()
      expect((await put(owner, first)).statusCode).toBe(200)
      // The same number while it waits for review: the row stays as it is.
      expect((await put(owner, first)).statusCode).toBe(200)
      expect((await put(owner, second)).statusCode).toBe(200)
      const events = await storedAuditEvents(tenant, 'SENDER_SETTING_CHANGED')
      expect(events.map((event) => event.details)).toEqual([{ senderNumber: maskPhone(first) }, { senderNumber: maskPhone(second) }])
    })

    it('records nothing for a refused PUT or for another tenant', async () => {
      const { tenant, owner, manager } = await academy(app.current)
      const other = await academy(app.current)
      expectProblem(await put(manager, uniqueSenderNumber()), 403, 'AUTH_008')
      expectProblem(await put(owner, '12345'), 400, 'INVALID_PHONE_NUMBER')
      expect(await storedAuditEvents(tenant)).toEqual([])

      expect((await put(owner, uniqueSenderNumber())).statusCode).toBe(200)
      expect(await storedAuditEvents(other.tenant)).toEqual([])
      const foreign = await app.current.inject({ method: 'GET', url: '/v1/audit-events', headers: other.owner.headers })
      expect(foreign.json()).toMatchObject({ items: [], total: 0 })
    })
  })

  describe('SENDER_SETTING_APPROVED / SENDER_SETTING_REJECTED (signed approval call)', () => {
    const decide = (signed: SignedCall, options: { requestId?: string; address?: string } = {}) => {
      const call = signedApproval(signed)
      return app.current.inject({
        ...call,
        remoteAddress: options.address ?? '127.0.0.1',
        headers: { ...call.headers, ...(options.requestId === undefined ? {} : { 'x-request-id': options.requestId }) },
      })
    }

    it('records an approval with no actor, the setting as target and the number masked', async () => {
      const tenant = await createPendingSenderTenant()
      const address = uniqueAddress()
      const response = await decide(
        { slug: tenant.slug, body: { registrationStatus: 'APPROVED', senderNumber: tenant.senderNumber } },
        { requestId: 'req-sender-approve', address },
      )
      expect(response.statusCode).toBe(200)
      const event = await theAuditEvent(tenant, 'SENDER_SETTING_APPROVED')
      expect(event).toMatchObject({
        actorId: null,
        targetType: 'SENDER_SETTING',
        targetId: String((await senderRow(tenant))!.id),
        requestId: 'req-sender-approve',
        ipAddress: address,
      })
      expect(event.details).toEqual({ senderNumber: maskPhone(tenant.senderNumber) })
      expectNoWholeNumber(event.details, tenant.senderNumber)
    })

    it("records a rejection with the operator's reason", async () => {
      const tenant = await createPendingSenderTenant()
      const response = await decide(
        { slug: tenant.slug, body: { registrationStatus: 'REJECTED', rejectionReason: '  번호 명의 불일치  ' } },
        { requestId: 'req-sender-reject' },
      )
      expect(response.statusCode).toBe(200)
      const event = await theAuditEvent(tenant, 'SENDER_SETTING_REJECTED')
      expect(event).toMatchObject({
        actorId: null,
        targetType: 'SENDER_SETTING',
        targetId: String((await senderRow(tenant))!.id),
        requestId: 'req-sender-reject',
        ipAddress: '127.0.0.1',
      })
      expect(event.details).toEqual({ senderNumber: maskPhone(tenant.senderNumber), reason: '번호 명의 불일치' })
      expectNoWholeNumber(event.details, tenant.senderNumber)
      expect(await storedAuditEvents(tenant, 'SENDER_SETTING_APPROVED')).toEqual([])
    })

    it('records nothing for a refused decision', async () => {
      const tenant = await createPendingSenderTenant()
      expectProblem(await decide({ slug: tenant.slug, body: { registrationStatus: 'REJECTED', rejectionReason: ' ' } }), 400, 'REJECTION_REASON_REQUIRED')
      expectProblem(await decide({ slug: tenant.slug, body: { registrationStatus: 'MAYBE' } }), 400, 'APPROVAL_STATUS_INVALID')
      expectProblem(
        await decide({ slug: tenant.slug, body: { registrationStatus: 'APPROVED', senderNumber: uniqueSenderNumber() } }),
        409,
        'SENDER_NUMBER_CHANGED',
      )
      const unsigned = await app.current.inject({ ...signedApproval({ slug: tenant.slug, body: { registrationStatus: 'APPROVED' }, secret: 'wrong-secret-wrong-secret-wrong-secret' }) })
      expect(unsigned.statusCode).toBe(401)
      expect(await storedAuditEvents(tenant)).toEqual([])
      expect((await senderRow(tenant))!.registrationStatus).toBe('PENDING')
    })

    it("keeps an approval in the decided tenant's log only", async () => {
      const tenant = await createPendingSenderTenant()
      const { tenant: bystander, owner } = await academy(app.current)
      expect((await decide({ slug: tenant.slug, body: { registrationStatus: 'APPROVED' } })).statusCode).toBe(200)
      expect(await storedAuditEvents(tenant, 'SENDER_SETTING_APPROVED')).toHaveLength(1)
      expect(await storedAuditEvents(bystander)).toEqual([])
      const foreign = await app.current.inject({ method: 'GET', url: '/v1/audit-events', headers: owner.headers })
      expect(foreign.json()).toMatchObject({ items: [], total: 0 })
    })
  })
})
