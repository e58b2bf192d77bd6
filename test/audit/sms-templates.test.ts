import { describe, expect, it } from 'vitest'
import { storedAuditEvents, theAuditEvent } from './audit-fixtures.js'
import { expectProblem, uniqueAddress } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

const CONTENT = 'Private note for {name}: tuition overdue'
const NEW_CONTENT = 'Private note for {name}: tuition paid'

describe('audit events of templates', () => {
  const app = useTestApp()

  const request = (
    who: Actor,
    method: 'POST' | 'PATCH' | 'DELETE',
    url: string,
    options: { payload?: object; requestId?: string; address?: string } = {},
  ) =>
    app.current.inject({
      method,
      url,
      payload: options.payload,
      remoteAddress: options.address ?? '127.0.0.1',
      headers: { ...who.headers, ...(options.requestId === undefined ? {} : { 'x-request-id': options.requestId }) },
    })
  const create = async (who: Actor, options: { requestId?: string; address?: string } = {}) => {
    const response = await request(who, 'POST', '/v1/sms-templates', {
      payload: { name: 'Tuition', content: CONTENT, category: 'PAYMENT' },
      ...options,
    })
    expect(response.statusCode).toBe(201)
    return response.json() as { id: number; version: number }
  }

  /** Events keep the template's name and which fields changed, never its text. */
  const expectNoContent = (details: Record<string, unknown>) => {
    expect(JSON.stringify(details)).not.toContain('Private note')
  }

  it('records TEMPLATE_CREATED with its name', async () => {
    const { tenant, instructor } = await academy(app.current)
    const address = uniqueAddress()
    const template = await create(instructor, { requestId: 'req-template-create', address })
    const event = await theAuditEvent(tenant, 'TEMPLATE_CREATED')
    expect(event).toMatchObject({
      actorId: instructor.user.id,
      targetType: 'SMS_TEMPLATE',
      targetId: String(template.id),
      requestId: 'req-template-create',
      ipAddress: address,
    })
    expect(event.details).toEqual({ name: 'Tuition' })
    expectNoContent(event.details)
  })

  it('records TEMPLATE_UPDATED with the new name and the names of the fields the edit wrote', async () => {
    const { tenant, instructor, manager } = await academy(app.current)
    const template = await create(instructor)
    const address = uniqueAddress()
    const response = await request(manager, 'PATCH', `/v1/sms-templates/${template.id}`, {
      payload: { content: NEW_CONTENT, name: 'Tuition 2', version: 0 },
      requestId: 'req-template-update',
      address,
    })
    expect(response.statusCode).toBe(200)
    const event = await theAuditEvent(tenant, 'TEMPLATE_UPDATED')
    expect(event).toMatchObject({
      actorId: manager.user.id,
      targetType: 'SMS_TEMPLATE',
      targetId: String(template.id),
      requestId: 'req-template-update',
      ipAddress: address,
    })
    expect(event.details).toEqual({ name: 'Tuition 2', changed: ['name', 'content'] })
    expectNoContent(event.details)

    expect((await request(instructor, 'PATCH', `/v1/sms-templates/${template.id}`, { payload: { category: 'GENERAL', version: 1 } })).statusCode).toBe(200)
    const second = (await storedAuditEvents(tenant, 'TEMPLATE_UPDATED'))[1]!
    expect(second).toMatchObject({ actorId: instructor.user.id, details: { name: 'Tuition 2', changed: ['category'] } })
  })

  it('records TEMPLATE_DELETED with the name the template had', async () => {
    const { tenant, instructor, owner } = await academy(app.current)
    const template = await create(instructor)
    const address = uniqueAddress()
    const response = await request(owner, 'DELETE', `/v1/sms-templates/${template.id}`, { requestId: 'req-template-delete', address })
    expect(response.statusCode).toBe(204)
    const event = await theAuditEvent(tenant, 'TEMPLATE_DELETED')
    expect(event).toMatchObject({
      actorId: owner.user.id,
      targetType: 'SMS_TEMPLATE',
      targetId: String(template.id),
      requestId: 'req-template-delete',
      ipAddress: address,
      details: { name: 'Tuition' },
    })
    expectNoContent(event.details)
  })

  it('records nothing for a refused edit or delete: stale version, not the editor, unknown template', async () => {
    const { tenant, instructor, manager, student } = await academy(app.current)
    const template = await create(manager)
    const url = `/v1/sms-templates/${template.id}`
    expectProblem(await request(manager, 'PATCH', url, { payload: { name: 'Late', version: 5 } }), 409, 'VERSION_CONFLICT')
    expectProblem(await request(instructor, 'PATCH', url, { payload: { name: 'Not mine', version: 0 } }), 403, 'AUTH_008')
    expectProblem(await request(instructor, 'DELETE', url), 403, 'AUTH_008')
    expectProblem(await request(manager, 'PATCH', url, { payload: { version: 0 } }), 400, 'VALIDATION_FAILED')
    expectProblem(await request(manager, 'PATCH', url, { payload: { content: 'x'.repeat(2001), version: 0 } }), 400, 'CONTENT_TOO_LONG')
    expectProblem(await request(manager, 'DELETE', '/v1/sms-templates/987654321'), 404, 'TEMPLATE_NOT_FOUND')
    expectProblem(await request(student, 'POST', '/v1/sms-templates', { payload: { name: 'N', content: 'c', category: 'GENERAL' } }), 403, 'AUTH_008')
    expectProblem(await request(manager, 'POST', '/v1/sms-templates', { payload: { name: 'N', content: 'c', category: 'NOPE' } }), 400, 'VALIDATION_FAILED')
    expect((await storedAuditEvents(tenant)).map((event) => event.type)).toEqual(['TEMPLATE_CREATED'])
  })

  it("never lets another tenant change a template or see its events", async () => {
    const first = await academy(app.current)
    const second = await academy(app.current)
    const template = await create(first.owner)
    const url = `/v1/sms-templates/${template.id}`
    expectProblem(await request(second.owner, 'PATCH', url, { payload: { name: 'Mine now', version: 0 } }), 404, 'TEMPLATE_NOT_FOUND')
    expectProblem(await request(second.owner, 'DELETE', url), 404, 'TEMPLATE_NOT_FOUND')
    expect(await storedAuditEvents(second.tenant)).toEqual([])
    expect((await storedAuditEvents(first.tenant)).map((event) => event.type)).toEqual(['TEMPLATE_CREATED'])
    const foreign = await app.current.inject({ method: 'GET', url: '/v1/audit-events', headers: second.owner.headers })
    expect(foreign.json()).toMatchObject({ items: [], total: 0 })
  })
})
