import { describe, expect, it } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import { owner } from '../../support/fixtures.js'
import { useTestApp } from '../../support/helper.js'
import { academy, type Actor } from '../../support/staff-fixtures.js'

const app = useTestApp()

async function create(by: Actor, body: Record<string, unknown> = {}) {
  const response = await app.current.inject({
    method: 'POST',
    url: '/v1/sms-templates',
    headers: by.headers,
    payload: { name: 'Attendance notice', content: '{name} arrived at {className}.', category: 'ATTENDANCE', ...body },
  })
  expect(response.statusCode).toBe(201)
  return response.json()
}

const patch = (by: Actor, id: number, payload: Record<string, unknown>) =>
  app.current.inject({ method: 'PATCH', url: `/v1/sms-templates/${id}`, headers: by.headers, payload })

const list = (by: Actor, query = '') =>
  app.current.inject({ method: 'GET', url: `/v1/sms-templates${query}`, headers: by.headers })

describe('POST /v1/sms-templates', () => {
  it('creates a template at version 0 with its creator and timestamps', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor, { name: 'Exam day', content: 'Exam tomorrow', category: 'EXAM' })
    expect(template).toEqual({
      id: expect.any(Number),
      name: 'Exam day',
      content: 'Exam tomorrow',
      category: 'EXAM',
      version: 0,
      createdBy: instructor.user.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    expect(Date.parse(template.createdAt)).not.toBeNaN()
  })

  it('stores placeholders as written, never rendered', async () => {
    const { manager } = await academy(app.current)
    const template = await create(manager, { content: 'Hello {name}, {unknown} stays' })
    expect(template.content).toBe('Hello {name}, {unknown} stays')
  })

  it('accepts every category', async () => {
    const { owner: boss } = await academy(app.current)
    for (const category of ['GENERAL', 'ATTENDANCE', 'PAYMENT', 'EXAM', 'CUSTOM']) {
      expect((await create(boss, { category })).category).toBe(category)
    }
  })

  it('accepts exactly 2,000 bytes: 1,000 Hangul characters, 2,000 ASCII, 1,000 emoji', async () => {
    const { instructor } = await academy(app.current)
    for (const content of ['가'.repeat(1000), 'a'.repeat(2000), '😀'.repeat(1000)]) {
      expect((await create(instructor, { content })).content).toBe(content)
    }
  })

  it('refuses 2,001 bytes with CONTENT_TOO_LONG', async () => {
    const { instructor } = await academy(app.current)
    for (const content of ['가'.repeat(1000) + 'a', 'a'.repeat(2001), '가'.repeat(1001)]) {
      const response = await app.current.inject({
        method: 'POST',
        url: '/v1/sms-templates',
        headers: instructor.headers,
        payload: { name: 'Too long', content, category: 'GENERAL' },
      })
      expectProblem(response, 400, 'CONTENT_TOO_LONG')
    }
    expect((await list(instructor)).json().total).toBe(0)
  })

  it('does not use idempotency keys: the same body twice makes two templates', async () => {
    const { instructor } = await academy(app.current)
    const body = { name: 'Twice', content: 'Same', category: 'GENERAL' }
    const first = await create(instructor, body)
    const second = await create(instructor, body)
    expect(second.id).not.toBe(first.id)
  })
})

describe('PATCH /v1/sms-templates/:id', () => {
  it('changes the given fields only and moves the version from 0 to 1', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor)
    const response = await patch(instructor, template.id, { name: 'Renamed', version: 0 })
    expect(response.statusCode).toBe(200)
    const updated = response.json()
    expect(updated).toMatchObject({
      id: template.id,
      name: 'Renamed',
      content: template.content,
      category: template.category,
      version: 1,
      createdBy: instructor.user.id,
      createdAt: template.createdAt,
    })
    expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(template.updatedAt))

    const again = await patch(instructor, template.id, { content: 'New text', category: 'CUSTOM', version: 1 })
    expect(again.json()).toMatchObject({ name: 'Renamed', content: 'New text', category: 'CUSTOM', version: 2 })
  })

  it('answers VERSION_CONFLICT for a stale or future version and changes nothing', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor)
    expect((await patch(instructor, template.id, { name: 'First', version: 0 })).statusCode).toBe(200)
    expectProblem(await patch(instructor, template.id, { name: 'Second', version: 0 }), 409, 'VERSION_CONFLICT')
    expectProblem(await patch(instructor, template.id, { name: 'Second', version: 7 }), 409, 'VERSION_CONFLICT')
    const [item] = (await list(instructor)).json().items
    expect(item).toMatchObject({ name: 'First', version: 1 })
  })

  it('lets exactly one of two concurrent edits of the same version win', async () => {
    const { instructor, manager } = await academy(app.current)
    const template = await create(instructor)
    const responses = await Promise.all([
      patch(instructor, template.id, { name: 'Mine', version: 0 }),
      patch(manager, template.id, { name: 'Theirs', version: 0 }),
    ])
    expect(responses.map((response) => response.statusCode).sort()).toEqual([200, 409])
    expect((await list(instructor)).json().items[0].version).toBe(1)
  })

  it('requires the version (VALIDATION_FAILED when missing)', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor)
    const response = await patch(instructor, template.id, { name: 'No version' })
    expectProblem(response, 400, 'VALIDATION_FAILED')
    expect(response.json().errors).toEqual([expect.objectContaining({ field: 'body.version' })])
  })

  it('refuses a body with nothing to change besides the version', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor)
    expectProblem(await patch(instructor, template.id, { version: 0 }), 400, 'VALIDATION_FAILED')
    expect((await list(instructor)).json().items[0].version).toBe(0)
  })

  it('applies the 2,000-byte rule to new content and keeps the old one', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor)
    expect((await patch(instructor, template.id, { content: '가'.repeat(1000), version: 0 })).statusCode).toBe(200)
    const response = await patch(instructor, template.id, { content: '가'.repeat(1000) + '!', version: 1 })
    expectProblem(response, 400, 'CONTENT_TOO_LONG')
    expect((await list(instructor)).json().items[0]).toMatchObject({ content: '가'.repeat(1000), version: 1 })
  })

  it('answers TEMPLATE_NOT_FOUND for an unknown or deleted id', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor)
    expectProblem(await patch(instructor, 2_000_000_000, { name: 'x', version: 0 }), 404, 'TEMPLATE_NOT_FOUND')
    await app.current.inject({ method: 'DELETE', url: `/v1/sms-templates/${template.id}`, headers: instructor.headers })
    expectProblem(await patch(instructor, template.id, { name: 'x', version: 0 }), 404, 'TEMPLATE_NOT_FOUND')
  })
})

describe('DELETE /v1/sms-templates/:id', () => {
  it('deletes with 204 and an empty body; a second delete is 404', async () => {
    const { instructor } = await academy(app.current)
    const template = await create(instructor)
    const url = `/v1/sms-templates/${template.id}`
    const response = await app.current.inject({ method: 'DELETE', url, headers: instructor.headers })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect((await list(instructor)).json().total).toBe(0)
    const again = await app.current.inject({ method: 'DELETE', url, headers: instructor.headers })
    expectProblem(again, 404, 'TEMPLATE_NOT_FOUND')
  })
})

describe('GET /v1/sms-templates', () => {
  it('answers an empty first page with defaults page 0 and size 20', async () => {
    const { instructor } = await academy(app.current)
    const response = await list(instructor)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ items: [], page: 0, perPage: 20, total: 0, totalPages: 0, hasNext: false })
  })

  it('pages newest first with correct totals, and an empty page beyond the end', async () => {
    const { instructor, manager } = await academy(app.current)
    const first = await create(instructor, { name: 'one' })
    const second = await create(manager, { name: 'two' })
    const third = await create(instructor, { name: 'three' })

    const page0 = (await list(instructor, '?page=0&size=2')).json()
    expect(page0).toMatchObject({ page: 0, perPage: 2, total: 3, totalPages: 2, hasNext: true })
    expect(page0.items.map((item: { id: number }) => item.id)).toEqual([third.id, second.id])
    expect(page0.items[0]).toEqual(third)

    const page1 = (await list(instructor, '?page=1&size=2')).json()
    expect(page1).toMatchObject({ page: 1, perPage: 2, total: 3, totalPages: 2, hasNext: false })
    expect(page1.items.map((item: { id: number }) => item.id)).toEqual([first.id])

    const beyond = (await list(instructor, '?page=9&size=2')).json()
    expect(beyond).toEqual({ items: [], page: 9, perPage: 2, total: 3, totalPages: 2, hasNext: false })

    const exact = (await list(instructor, '?size=3')).json()
    expect(exact).toMatchObject({ total: 3, totalPages: 1, hasNext: false })
  })

  it('breaks ties on the creation time by id, newest id first', async () => {
    const { tenant, instructor } = await academy(app.current)
    const createdAt = new Date('2026-01-01T00:00:00Z')
    const rows = await owner()
      .insertInto('smsTemplates')
      .values(
        ['a', 'b', 'c'].map((name) => ({
          tenantId: tenant.id,
          name,
          content: 'same instant',
          category: 'GENERAL' as const,
          createdBy: instructor.user.id,
          createdAt,
          updatedAt: createdAt,
        })),
      )
      .returning('id')
      .execute()
    const expected = rows.map((row) => row.id).sort((a, b) => b - a)
    const pages = await Promise.all([0, 1, 2].map((page) => list(instructor, `?size=1&page=${page}`)))
    expect(pages.map((response) => response.json().items[0].id)).toEqual(expected)
  })

  it('filters by category, with totals of the filtered set', async () => {
    const { instructor } = await academy(app.current)
    await create(instructor, { category: 'PAYMENT' })
    const exam = await create(instructor, { category: 'EXAM' })
    const page = (await list(instructor, '?category=EXAM')).json()
    expect(page).toMatchObject({ total: 1, totalPages: 1, hasNext: false })
    expect(page.items).toEqual([exam])
  })

  it('shows every staff member the whole tenant, full content included', async () => {
    const { owner: boss, manager, instructor } = await academy(app.current)
    const long = await create(boss, { content: 'x'.repeat(500) })
    await create(instructor)
    for (const reader of [boss, manager, instructor]) {
      const page = (await list(reader)).json()
      expect(page.total).toBe(2)
      expect(page.items[1]).toEqual(long)
    }
  })
})
