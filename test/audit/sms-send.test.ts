import { describe, expect, it } from 'vitest'
import { storedAuditEvents, theAuditEvent } from './audit-fixtures.js'
import { uniqueAddress } from '../support/auth-fixtures.js'
import { owner as ownerDb, type TenantRow } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { createClass, enrol, messageRows, minutesFromNow, newKey, problem } from '../support/sms-send-fixtures.js'
import { academy, actor, type Actor } from '../support/staff-fixtures.js'

const PHONES = ['010-2345-6781', '010-2345-6782', '010-2345-6783']
const DIGITS = PHONES.map((phone) => phone.replace(/-/g, ''))
const CONTENT = 'Secret exam results for {name}'

/** The text of an event's details never holds a recipient's number (any written form) or the message text. */
function expectNoPhoneOrContent(details: Record<string, unknown>) {
  const text = JSON.stringify(details)
  for (const phone of [...PHONES, ...DIGITS]) expect(text).not.toContain(phone)
  expect(text).not.toContain('Secret exam results')
}

describe('audit events of sends and cancellations', () => {
  // No service-wide daily limit, so the early quota check is skipped and a tenant's own quota is refused only by the
  // reservation, the send's last statement, after the event was written in the same transaction.
  const app = useTestApp({ env: { SVC_SMS_TENANT_DAILY_RECIPIENTS: '0' } })

  const call = (who: Actor, url: string, options: { payload?: object; key?: string; requestId?: string; address?: string } = {}) =>
    app.current.inject({
      method: 'POST',
      url,
      payload: options.payload,
      remoteAddress: options.address ?? '127.0.0.1',
      headers: {
        ...who.headers,
        ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
        ...(options.requestId === undefined ? {} : { 'x-request-id': options.requestId }),
      },
    })
  const sendAs = (who: Actor, payload: object, options: { key?: string; requestId?: string; address?: string } = {}) =>
    call(who, '/v1/sms/send', { payload, key: newKey(), ...options })
  const direct = (extra: object = {}) => ({ recipients: PHONES.map((phone) => ({ phone })), title: 'Results', content: CONTENT, ...extra })
  const setTenantQuota = (tenant: TenantRow, quota: number) =>
    ownerDb().updateTable('tenants').set({ dailyRecipientQuota: quota }).where('id', '=', tenant.id).execute()

  describe('SMS_ACCEPTED', () => {
    it('records an accepted send: the sender, the message, the request and its shape, never a phone or the text', async () => {
      const { tenant, instructor } = await academy(app.current)
      const address = uniqueAddress()
      const template = (await call(instructor, '/v1/sms-templates', { payload: { name: 'T', content: 'x', category: 'GENERAL' } })).json()
      const scheduledAt = minutesFromNow(90)
      const response = await sendAs(instructor, direct({ templateId: template.id, scheduledAt }), { requestId: 'req-sms-accepted', address })
      expect(response.statusCode).toBe(201)
      const event = await theAuditEvent(tenant, 'SMS_ACCEPTED')
      expect(event).toMatchObject({
        actorId: instructor.user.id,
        targetType: 'SMS_MESSAGE',
        targetId: String(response.json().id),
        requestId: 'req-sms-accepted',
        ipAddress: address,
      })
      expect(event.details).toEqual({
        recipientCount: 3,
        purpose: 'INFORMATIONAL',
        optedOutCount: 0,
        noConsentCount: 0,
        messageType: 'SMS',
        scheduledAt: new Date(scheduledAt).toISOString(),
        templateId: template.id,
        recipientGroupId: null,
        classId: null,
        channel: 'SMS',
        kakaoTemplateId: null,
      })
      expectNoPhoneOrContent(event.details)
    })

    it('names the group of a group send', async () => {
      const { tenant, manager } = await academy(app.current)
      const group = await call(manager, '/v1/sms/recipient-groups', { payload: { name: 'G', recipients: PHONES.map((phone) => ({ phone })) }, key: newKey() })
      expect(group.statusCode).toBe(201)
      const response = await sendAs(manager, { recipientGroupId: group.json().id, title: 'T', content: CONTENT })
      expect(response.statusCode).toBe(201)
      const event = await theAuditEvent(tenant, 'SMS_ACCEPTED')
      expect(event).toMatchObject({ actorId: manager.user.id, targetId: String(response.json().id) })
      expect(event.details).toMatchObject({ recipientCount: 3, recipientGroupId: group.json().id, scheduledAt: null, templateId: null, classId: null })
      expectNoPhoneOrContent(event.details)
    })

    it('records a class send with its class', async () => {
      const { tenant, owner } = await academy(app.current)
      const math = await createClass(tenant)
      await enrol(tenant, math.id, { guardianPhone: PHONES[0] })
      await enrol(tenant, math.id, { guardianPhone: PHONES[1] })
      const response = await call(owner, `/v1/sms/send/class/${math.id}`, {
        payload: { title: 'T', content: CONTENT },
        key: newKey(),
        requestId: 'req-class-send',
      })
      expect(response.statusCode).toBe(201)
      const event = await theAuditEvent(tenant, 'SMS_ACCEPTED')
      expect(event).toMatchObject({
        actorId: owner.user.id,
        targetType: 'SMS_MESSAGE',
        targetId: String(response.json().id),
        requestId: 'req-class-send',
        ipAddress: '127.0.0.1',
      })
      expect(event.details).toEqual({
        recipientCount: 2,
        purpose: 'INFORMATIONAL',
        optedOutCount: 0,
        noConsentCount: 0,
        messageType: 'SMS',
        scheduledAt: null,
        templateId: null,
        recipientGroupId: null,
        classId: math.id,
        channel: 'SMS',
        kakaoTemplateId: null,
      })
      expectNoPhoneOrContent(event.details)
    })

    it('writes one event for a key however often it is replayed', async () => {
      const { tenant, owner } = await academy(app.current)
      const key = newKey()
      const first = await sendAs(owner, direct(), { key })
      const replay = await sendAs(owner, direct(), { key })
      expect(first.statusCode).toBe(201)
      expect(replay.statusCode).toBe(201)
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect((await storedAuditEvents(tenant, 'SMS_ACCEPTED')).map((event) => event.targetId)).toEqual([String(first.json().id)])
    })

    it('leaves no event when the quota reservation, the last statement, refuses the send (the transaction rolls back)', async () => {
      const { tenant, owner } = await academy(app.current)
      await setTenantQuota(tenant, 4)
      expect((await sendAs(owner, direct())).statusCode).toBe(201)
      const refused = await sendAs(owner, direct())
      expect(problem(refused)).toEqual({ status: 429, code: 'SMS_QUOTA_EXCEEDED' })
      expect(await messageRows(tenant)).toHaveLength(1)
      expect(await storedAuditEvents(tenant, 'SMS_ACCEPTED')).toHaveLength(1)
    })

    it('leaves no event for a refused send', async () => {
      const { tenant, owner, student } = await academy(app.current)
      expect(problem(await sendAs(owner, direct({ templateId: 987_654_321 })))).toEqual({ status: 404, code: 'TEMPLATE_NOT_FOUND' })
      expect(problem(await sendAs(owner, direct({ recipients: [{ phone: '12345' }] })))).toEqual({ status: 400, code: 'INVALID_PHONE_NUMBER' })
      expect(problem(await sendAs(owner, { title: 'T', content: CONTENT }))).toEqual({ status: 400, code: 'RECIPIENTS_REQUIRED' })
      expect(problem(await sendAs(student, direct()))).toEqual({ status: 403, code: 'AUTH_008' })
      expect(await storedAuditEvents(tenant)).toEqual([])
    })
  })

  describe('SMS_CANCELLED', () => {
    const cancel = (who: Actor, id: number, options: { requestId?: string; address?: string } = {}) =>
      call(who, `/v1/sms/history/${id}/cancel`, options)

    it('records a cancellation by whoever cancelled it, with the recipient count', async () => {
      const { tenant, instructor } = await academy(app.current)
      const manager = await actor(app.current, tenant, 'MANAGER')
      const sent = await sendAs(instructor, direct({ scheduledAt: minutesFromNow(60) }))
      expect(sent.statusCode).toBe(201)
      const address = uniqueAddress()
      const response = await cancel(manager, sent.json().id, { requestId: 'req-sms-cancel', address })
      expect(response.statusCode).toBe(200)
      const event = await theAuditEvent(tenant, 'SMS_CANCELLED')
      expect(event).toMatchObject({
        actorId: manager.user.id,
        targetType: 'SMS_MESSAGE',
        targetId: String(sent.json().id),
        requestId: 'req-sms-cancel',
        ipAddress: address,
        details: { recipientCount: 3 },
      })
      expectNoPhoneOrContent(event.details)
    })

    it('leaves no event for a refused cancellation', async () => {
      const { tenant, owner, instructor } = await academy(app.current)
      const immediate = await sendAs(owner, direct())
      const scheduled = await sendAs(owner, direct({ scheduledAt: minutesFromNow(60) }))
      expect(problem(await cancel(owner, immediate.json().id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
      expect(problem(await cancel(instructor, scheduled.json().id))).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
      expect((await cancel(owner, scheduled.json().id)).statusCode).toBe(200)
      expect(problem(await cancel(owner, scheduled.json().id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
      expect((await storedAuditEvents(tenant, 'SMS_CANCELLED')).map((event) => event.targetId)).toEqual([String(scheduled.json().id)])
    })
  })

  it("never shows one tenant's send events to another tenant", async () => {
    const first = await academy(app.current)
    const second = await academy(app.current)
    const sent = await sendAs(first.owner, direct({ scheduledAt: minutesFromNow(60) }))
    expect(sent.statusCode).toBe(201)
    // Another tenant cannot cancel it either: no event in either tenant.
    expect(problem(await call(second.owner, `/v1/sms/history/${sent.json().id}/cancel`))).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
    expect((await call(first.owner, `/v1/sms/history/${sent.json().id}/cancel`)).statusCode).toBe(200)

    const log = (who: Actor) => app.current.inject({ method: 'GET', url: '/v1/audit-events', headers: who.headers })
    const own = await log(first.owner)
    expect(own.statusCode).toBe(200)
    expect(own.json().items.map((item: { type: string }) => item.type).sort()).toEqual(['SMS_ACCEPTED', 'SMS_CANCELLED'])
    const foreign = await log(second.owner)
    expect(foreign.statusCode).toBe(200)
    expect(foreign.json()).toMatchObject({ items: [], total: 0 })
    expect(await storedAuditEvents(second.tenant)).toEqual([])
  })
})
