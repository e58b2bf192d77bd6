import { describe, expect, it } from 'vitest'
import { storedAuditEvents, theAuditEvent } from './audit-fixtures.js'
import { uniqueAddress } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { newKey, problem } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

const PHONES = ['010-3456-7891', '02-3456-7892']
const DIGITS = ['01034567891', '0234567892']

describe('audit events of recipient groups', () => {
  const app = useTestApp()

  const createGroup = (who: Actor, payload: object, options: { key?: string; requestId?: string; address?: string } = {}) =>
    app.current.inject({
      method: 'POST',
      url: '/v1/sms/recipient-groups',
      payload,
      remoteAddress: options.address ?? '127.0.0.1',
      headers: {
        ...who.headers,
        'idempotency-key': options.key ?? newKey(),
        ...(options.requestId === undefined ? {} : { 'x-request-id': options.requestId }),
      },
    })
  const group = (name = 'Grade 3 parents') => ({ name, recipients: PHONES.map((phone, index) => ({ phone, name: `Parent ${index}` })) })

  it('records RECIPIENT_GROUP_CREATED with its name and size, never a member phone', async () => {
    const { tenant, instructor } = await academy(app.current)
    const address = uniqueAddress()
    const response = await createGroup(instructor, group(), { requestId: 'req-group-create', address })
    expect(response.statusCode).toBe(201)
    const event = await theAuditEvent(tenant, 'RECIPIENT_GROUP_CREATED')
    expect(event).toMatchObject({
      actorId: instructor.user.id,
      targetType: 'RECIPIENT_GROUP',
      targetId: String(response.json().id),
      requestId: 'req-group-create',
      ipAddress: address,
    })
    expect(event.details).toEqual({ name: 'Grade 3 parents', recipientCount: 2 })
    const text = JSON.stringify(event.details)
    for (const phone of [...PHONES, ...DIGITS]) expect(text).not.toContain(phone)
  })

  it('writes one event for a key however often it is replayed', async () => {
    const { tenant, manager } = await academy(app.current)
    const key = newKey()
    const first = await createGroup(manager, group(), { key })
    const replay = await createGroup(manager, group(), { key })
    expect(first.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect((await storedAuditEvents(tenant, 'RECIPIENT_GROUP_CREATED')).map((event) => event.targetId)).toEqual([String(first.json().id)])
  })

  it('records nothing for a refused group, and nothing another tenant can see', async () => {
    const { tenant, owner, student } = await academy(app.current)
    const other = await academy(app.current)
    expect(problem(await createGroup(owner, { name: 'Bad', recipients: [{ phone: '12345' }] }))).toEqual({ status: 400, code: 'INVALID_PHONE_NUMBER' })
    expect(problem(await createGroup(owner, { name: 'Empty', recipients: [] }))).toEqual({ status: 400, code: 'RECIPIENTS_REQUIRED' })
    expect(problem(await createGroup(owner, { recipients: [{ phone: PHONES[0] }] }))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
    expect(problem(await createGroup(student, group()))).toEqual({ status: 403, code: 'AUTH_008' })
    expect(await storedAuditEvents(tenant)).toEqual([])

    expect((await createGroup(owner, group())).statusCode).toBe(201)
    expect(await storedAuditEvents(other.tenant)).toEqual([])
    const foreign = await app.current.inject({ method: 'GET', url: '/v1/audit-events', headers: other.owner.headers })
    expect(foreign.json()).toMatchObject({ items: [], total: 0 })
  })
})
