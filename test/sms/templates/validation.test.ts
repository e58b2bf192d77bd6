import { beforeAll, describe, expect, it } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import { useTestApp } from '../../support/helper.js'
import { injectJsonText } from '../../platform/raw-json-body.js'
import { academy, type Actor } from '../../support/staff-fixtures.js'

const app = useTestApp()

const valid = { name: 'Notice', content: 'Class is cancelled today.', category: 'GENERAL' }

describe('SMS template input validation', () => {
  let staff: Actor
  let templateId: number

  beforeAll(async () => {
    staff = (await academy(app.current)).instructor
    const created = await app.current.inject({
      method: 'POST',
      url: '/v1/sms-templates',
      headers: staff.headers,
      payload: valid,
    })
    templateId = created.json().id
  })

  const post = (payload: unknown) =>
    app.current.inject({ method: 'POST', url: '/v1/sms-templates', headers: staff.headers, payload: payload as object })
  const patch = (payload: unknown, id: unknown = templateId) =>
    app.current.inject({
      method: 'PATCH',
      url: `/v1/sms-templates/${String(id)}`,
      headers: staff.headers,
      payload: payload as object,
    })
  const get = (query: string) =>
    app.current.inject({ method: 'GET', url: `/v1/sms-templates?${query}`, headers: staff.headers })
  const remove = (id: string) =>
    app.current.inject({ method: 'DELETE', url: `/v1/sms-templates/${id}`, headers: staff.headers })

  it.each([
    ['missing name', { content: valid.content, category: valid.category }],
    ['missing content', { name: valid.name, category: valid.category }],
    ['missing category', { name: valid.name, content: valid.content }],
    ['empty name', { ...valid, name: '' }],
    ['blank name', { ...valid, name: '   ' }],
    ['name over 100 characters', { ...valid, name: 'n'.repeat(101) }],
    ['name of 50,000 characters (under the body limit)', { ...valid, name: 'n'.repeat(50_000) }],
    ['numeric name', { ...valid, name: 42 }],
    ['null name', { ...valid, name: null }],
    ['empty content', { ...valid, content: '' }],
    ['blank content', { ...valid, content: ' \n ' }],
    ['numeric content', { ...valid, content: 7 }],
    ['array content', { ...valid, content: ['a'] }],
    ['unknown category', { ...valid, category: 'MARKETING' }],
    ['lower-case category', { ...valid, category: 'general' }],
    ['numeric category', { ...valid, category: 1 }],
    ['unknown field', { ...valid, tenantId: 1 }],
    ['client-chosen creator', { ...valid, createdBy: 1 }],
    ['client-chosen version', { ...valid, version: 3 }],
    ['an array body', [valid]],
  ])('POST refuses %s with VALIDATION_FAILED', async (_case, payload) => {
    expectProblem(await post(payload), 400, 'VALIDATION_FAILED')
  })

  it('POST answers CONTENT_TOO_LONG for content up to the body limit, not a server error', async () => {
    expectProblem(await post({ ...valid, content: 'x'.repeat(60_000) }), 400, 'CONTENT_TOO_LONG')
    expectProblem(await post({ ...valid, content: '가'.repeat(20_000) }), 400, 'CONTENT_TOO_LONG')
  })

  it('POST refuses a body over the request size limit with 413', async () => {
    expectProblem(await post({ ...valid, content: 'x'.repeat(65 * 1024) }), 413, 'PAYLOAD_TOO_LARGE')
  })

  it('POST refuses malformed, empty and non-object JSON', async () => {
    for (const payload of ['{"name": "x",', '', '"hello"', 'null', '42']) {
      const response = await injectJsonText(app.current, { method: 'POST', url: '/v1/sms-templates', headers: staff.headers }, payload)
      expectProblem(response, 400, 'VALIDATION_FAILED')
    }
  })

  it.each([
    ['a string version', { name: 'x', version: '0' }],
    ['a fractional version', { name: 'x', version: 0.5 }],
    ['a negative version', { name: 'x', version: -1 }],
    ['a version beyond 32 bits', { name: 'x', version: 2_147_483_648 }],
    ['a null version', { name: 'x', version: null }],
    ['a null name', { name: null, version: 0 }],
    ['an empty content', { content: '', version: 0 }],
    ['an unknown category', { category: 'SPAM', version: 0 }],
    ['an unknown field', { name: 'x', version: 0, createdBy: 1 }],
    ['an id in the body', { id: 1, name: 'x', version: 0 }],
  ])('PATCH refuses %s with VALIDATION_FAILED', async (_case, payload) => {
    expectProblem(await patch(payload), 400, 'VALIDATION_FAILED')
  })

  it.each(['abc', '0', '-1', '1.5', '99999999999999999999', '1e400'])(
    'PATCH and DELETE refuse the id %s with VALIDATION_FAILED',
    async (id) => {
      expectProblem(await patch({ name: 'x', version: 0 }, id), 400, 'VALIDATION_FAILED')
      expectProblem(await remove(id), 400, 'VALIDATION_FAILED')
    },
  )

  it.each([
    'size=0',
    'size=101',
    'size=-5',
    'size=1.5',
    'size=abc',
    'page=-1',
    'page=abc',
    'page=99999999999999',
    'category=MARKETING',
  ])('GET refuses the query %s with VALIDATION_FAILED', async (query) => {
    expectProblem(await get(query), 400, 'VALIDATION_FAILED')
  })

  it('GET accepts the size bounds 1 and 100 and ignores unknown query parameters', async () => {
    for (const query of ['size=1', 'size=100', '_=1700000000']) {
      expect((await get(query)).statusCode).toBe(200)
    }
  })

  it('left the template untouched through all of the above', async () => {
    expect((await get('')).json()).toMatchObject({ total: 1, items: [{ id: templateId, ...valid, version: 0 }] })
  })
})
