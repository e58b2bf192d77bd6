import { describe, expect, it } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import { owner } from '../../support/fixtures.js'
import { useTestApp } from '../../support/helper.js'
import { academy, actor, type Actor } from '../../support/staff-fixtures.js'

const app = useTestApp()

async function create(by: Actor, name = 'Payment due') {
  const response = await app.current.inject({
    method: 'POST',
    url: '/v1/sms-templates',
    headers: by.headers,
    payload: { name, content: 'Tuition is due.', category: 'PAYMENT' },
  })
  expect(response.statusCode).toBe(201)
  return response.json() as { id: number; version: number }
}

const patch = (by: Actor, id: number, payload: Record<string, unknown>) =>
  app.current.inject({ method: 'PATCH', url: `/v1/sms-templates/${id}`, headers: by.headers, payload })

const list = (by: Actor) => app.current.inject({ method: 'GET', url: '/v1/sms-templates', headers: by.headers })

const remove = (by: Actor, id: number) =>
  app.current.inject({ method: 'DELETE', url: `/v1/sms-templates/${id}`, headers: by.headers })

const stored = (id: number) =>
  owner().selectFrom('smsTemplates').select(['name', 'version']).where('id', '=', id).executeTakeFirst()

describe('SMS template permissions', () => {
  it('lets an instructor edit and delete own templates', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor)
    expect((await patch(instructor, template.id, { name: 'Mine', version: 0 })).statusCode).toBe(200)
    expect((await remove(instructor, template.id)).statusCode).toBe(204)
    expect(await stored(template.id)).toBeUndefined()
  })

  it("refuses another instructor's edit and delete with AUTH_008, whatever the version", async () => {
    const { tenant, instructor } = await academy(app.current)
    const other = await actor(app.current, tenant, 'INSTRUCTOR')
    const template = await create(instructor)
    expectProblem(await patch(other, template.id, { name: 'Hijack', version: 0 }), 403, 'AUTH_008')
    // A stale version does not tell a caller without permission anything about the template's version.
    expectProblem(await patch(other, template.id, { name: 'Hijack', version: 5 }), 403, 'AUTH_008')
    expectProblem(await remove(other, template.id), 403, 'AUTH_008')
    expect(await stored(template.id)).toEqual({ name: 'Payment due', version: 0 })
  })

  it('answers 404 before permission: an unknown id is TEMPLATE_NOT_FOUND for everyone', async () => {
    const { tenant } = await academy(app.current)
    const other = await actor(app.current, tenant, 'INSTRUCTOR')
    expectProblem(await patch(other, 2_000_000_001, { name: 'x', version: 0 }), 404, 'TEMPLATE_NOT_FOUND')
    expectProblem(await remove(other, 2_000_000_001), 404, 'TEMPLATE_NOT_FOUND')
  })

  it("lets OWNER and MANAGER edit and delete anyone's template", async () => {
    const { owner: boss, manager, instructor } = await academy(app.current)
    const template = await create(instructor)
    expect((await patch(manager, template.id, { name: 'By manager', version: 0 })).json().version).toBe(1)
    expect((await patch(boss, template.id, { name: 'By owner', version: 1 })).json()).toMatchObject({
      name: 'By owner',
      version: 2,
      createdBy: instructor.user.id,
    })
    expect((await remove(manager, template.id)).statusCode).toBe(204)
    const another = await create(manager)
    expect((await remove(boss, another.id)).statusCode).toBe(204)
  })

  it('refuses a student on every route with AUTH_008', async () => {
    const { instructor, student } = await academy(app.current)
    const template = await create(instructor)
    const requests = [
      { method: 'GET', url: '/v1/sms-templates' },
      { method: 'POST', url: '/v1/sms-templates', payload: { name: 'x', content: 'y', category: 'GENERAL' } },
      { method: 'PATCH', url: `/v1/sms-templates/${template.id}`, payload: { name: 'x', version: 0 } },
      { method: 'DELETE', url: `/v1/sms-templates/${template.id}` },
    ] as const
    for (const request of requests) {
      expectProblem(await app.current.inject({ ...request, headers: student.headers }), 403, 'AUTH_008')
    }
    expect(await stored(template.id)).toEqual({ name: 'Payment due', version: 0 })
  })

  it('answers AUTH_002 on every route without a token', async () => {
    for (const [method, url] of [
      ['GET', '/v1/sms-templates'],
      ['POST', '/v1/sms-templates'],
      ['PATCH', '/v1/sms-templates/1'],
      ['DELETE', '/v1/sms-templates/1'],
    ] as const) {
      expectProblem(await app.current.inject({ method, url }), 401, 'AUTH_002')
    }
  })

  it('answers AUTH_003 for a forged token', async () => {
    const response = await app.current.inject({
      method: 'GET',
      url: '/v1/sms-templates',
      headers: { authorization: 'Bearer not-a-jwt' },
    })
    expectProblem(response, 401, 'AUTH_003')
  })
})

describe('SMS templates across tenants', () => {
  it("never lists, edits or deletes another tenant's template", async () => {
    const mine = await academy(app.current)
    const theirs = await academy(app.current)
    const foreign = await create(theirs.instructor, 'Theirs')
    await create(mine.instructor, 'Mine')

    for (const reader of [mine.owner, mine.manager, mine.instructor]) {
      const page = (await list(reader)).json()
      expect(page.total).toBe(1)
      expect(page.items.map((item: { id: number }) => item.id)).not.toContain(foreign.id)
    }
    expectProblem(await patch(mine.owner, foreign.id, { name: 'Stolen', version: 0 }), 404, 'TEMPLATE_NOT_FOUND')
    expectProblem(await remove(mine.owner, foreign.id), 404, 'TEMPLATE_NOT_FOUND')
    expect(await stored(foreign.id)).toEqual({ name: 'Theirs', version: 0 })
  })
})
