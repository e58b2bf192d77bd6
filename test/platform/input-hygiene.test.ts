import { gzipSync } from 'node:zlib'
import { beforeAll, describe, expect, it } from 'vitest'
import { expectProblem } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { academy, type Actor } from '../support/staff-fixtures.js'
import { injectJsonText } from './raw-json-body.js'

const app = useTestApp()

describe('input hygiene', () => {
  let staff: Actor

  beforeAll(async () => {
    staff = (await academy(app.current)).instructor
  })

  const createTemplate = async () => {
    const created = await app.current.inject({
      method: 'POST',
      url: '/v1/sms-templates',
      headers: staff.headers,
      payload: { name: 'Notice', content: 'Class is cancelled today.', category: 'GENERAL' },
    })
    expect(created.statusCode).toBe(201)
    return created.json().id as number
  }

  describe('integer ids in paths are canonical decimal digits', () => {
    const NOT_CANONICAL = ['0x10', '+1', '01', '1e3', '1.0', '0', '-1', '%201', '9007199254740992']

    it.each(NOT_CANONICAL)('DELETE /v1/sms-templates/%s answers 400 and deletes nothing', async (id) => {
      const templateId = await createTemplate()
      const response = await app.current.inject({ method: 'DELETE', url: `/v1/sms-templates/${id}`, headers: staff.headers })
      expectProblem(response, 400, 'VALIDATION_FAILED')
      const still = await app.current.inject({ method: 'GET', url: '/v1/sms-templates?size=100', headers: staff.headers })
      expect(JSON.stringify(still.json())).toContain(`"id":${templateId}`)
    })

    it.each([
      ['GET', '/v1/sms/history/0x10'],
      ['POST', '/v1/sms/history/+1/cancel'],
      ['GET', '/v1/sms/recipient-groups/1e3'],
      ['PATCH', '/v1/sms-templates/01'],
    ] as const)('%s %s answers 400 VALIDATION_FAILED', async (method, url) => {
      const response = await app.current.inject({ method, url, headers: staff.headers, ...(method === 'PATCH' ? { payload: { name: 'x', version: 0 } } : {}) })
      expectProblem(response, 400, 'VALIDATION_FAILED')
    })

    it('accepts a canonical id', async () => {
      const templateId = await createTemplate()
      const response = await app.current.inject({ method: 'DELETE', url: `/v1/sms-templates/${templateId}`, headers: staff.headers })
      expect(response.statusCode).toBeLessThan(300)
    })
  })

  describe('integers in query strings are canonical decimal digits, on every route', () => {
    let owner: Actor
    beforeAll(async () => {
      owner = (await academy(app.current)).owner
    })

    const NOT_CANONICAL = ['0x1', '1e1', '1e0', '+1', '%201', '1%20', '%091', '01', '00', '1.0', '0b1', '0o1', '-0', '']
    const PARAMETERS = [
      ['/v1/sms/history', 'page'],
      ['/v1/sms/history', 'size'],
      ['/v1/sms-templates', 'page'],
      ['/v1/sms-templates', 'size'],
      ['/v1/sms/opt-outs', 'page'],
      ['/v1/sms/opt-outs', 'size'],
      ['/v1/audit-events', 'page'],
      ['/v1/audit-events', 'size'],
      ['/v1/audit-events', 'actorId'],
    ] as const

    it.each(PARAMETERS)('GET %s?%s= answers 400 VALIDATION_FAILED for hex, exponents, signs, spaces and leading zeros', async (path, name) => {
      for (const value of NOT_CANONICAL) {
        const response = await app.current.inject({ method: 'GET', url: `${path}?${name}=${value}`, headers: owner.headers })
        expect({ value, status: response.statusCode, type: response.headers['content-type'] }).toEqual({
          value,
          status: 400,
          type: expect.stringMatching(/^application\/problem\+json/),
        })
        expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [expect.objectContaining({ field: `querystring.${name}` })] })
      }
    })

    it.each(PARAMETERS)('GET %s?%s= still takes canonical digits, as numbers', async (path, name) => {
      const value = name === 'page' ? '0' : '1'
      const response = await app.current.inject({ method: 'GET', url: `${path}?${name}=${value}`, headers: owner.headers })
      expect(response.statusCode).toBe(200)
      if (name !== 'actorId') expect(response.json()[name === 'size' ? 'perPage' : 'page']).toBe(Number(value))
    })

    it('still fills in defaults when a parameter is absent', async () => {
      const response = await app.current.inject({ method: 'GET', url: '/v1/sms/opt-outs', headers: owner.headers })
      expect(response.json()).toMatchObject({ page: 0, perPage: 20 })
    })
  })

  describe('a known path with a method it does not serve', () => {
    it.each([
      ['PUT', '/v1/sms-templates', ['GET', 'HEAD', 'POST']],
      ['DELETE', '/v1/login', ['POST']],
      ['GET', '/v1/sms/send', ['POST']],
      ['POST', '/v1/sms-templates/12', ['DELETE', 'PATCH']],
    ] as const)('%s %s answers 405 METHOD_NOT_ALLOWED with Allow', async (method, url, allowed) => {
      const response = await app.current.inject({ method, url, headers: staff.headers })
      expectProblem(response, 405, 'METHOD_NOT_ALLOWED')
      expect(String(response.headers.allow).split(', ').sort()).toEqual([...allowed].sort())
    })

    it('an unknown path still answers 404 without Allow', async () => {
      const response = await app.current.inject({ method: 'GET', url: '/v1/no-such-endpoint' })
      expectProblem(response, 404, 'NOT_FOUND')
      expect(response.headers.allow).toBeUndefined()
    })

    it('OPTIONS on a known path answers 404 (no CORS preflight configured)', async () => {
      const response = await app.current.inject({ method: 'OPTIONS', url: '/v1/login' })
      expectProblem(response, 404, 'NOT_FOUND')
    })
  })

  describe('body limits are enforced before parsing', () => {
    const json = (bytes: number) => JSON.stringify({ name: 'Notice', content: 'x'.repeat(bytes), category: 'GENERAL' })

    it('answers 413 for a 100 KiB body on an ordinary route', async () => {
      const response = await injectJsonText(app.current, { method: 'POST', url: '/v1/sms-templates', headers: staff.headers }, json(100 * 1024))
      expectProblem(response, 413, 'PAYLOAD_TOO_LARGE')
    })

    it('reads a 2.5 MB body on the send route (10,000 recipients fit) and refuses one over 4 MiB', async () => {
      const recipients = (count: number) =>
        JSON.stringify({
          title: 'Notice',
          content: 'hi',
          recipients: Array.from({ length: count }, (_, i) => ({
            phone: `0101234${String(i % 10_000).padStart(4, '0')}`,
            name: 'n'.repeat(100),
            className: 'c'.repeat(100),
          })),
        })
      const send = (payload: string) =>
        app.current.inject({
          method: 'POST',
          url: '/v1/sms/send',
          headers: { ...staff.headers, 'content-type': 'application/json', 'idempotency-key': `limit-${Math.random()}` },
          payload,
        })
      const large = recipients(10_001)
      expect(large.length).toBeGreaterThan(2_400_000)
      expectProblem(await send(large), 400, 'TOO_MANY_RECIPIENTS')
      const tooLarge = recipients(20_000)
      expect(tooLarge.length).toBeGreaterThan(4 * 1024 * 1024)
      expectProblem(await send(tooLarge), 413, 'PAYLOAD_TOO_LARGE')
    })
  })

  describe('bodies the JSON parser would not decode answer 415', () => {
    const post = (headers: Record<string, string>, payload: string | Buffer) =>
      app.current.inject({ method: 'POST', url: '/v1/sms-templates', headers: { ...staff.headers, ...headers }, payload })
    const body = JSON.stringify({ name: 'Notice', content: 'Class is cancelled today.', category: 'GENERAL' })

    it.each(['utf-16', 'UTF-16LE', 'iso-8859-1', '"latin1"'])('refuses charset=%s', async (charset) => {
      const encoded = charset.toLowerCase().includes('16') ? Buffer.from(body, 'utf16le') : Buffer.from(body, 'latin1')
      expectProblem(await post({ 'content-type': `application/json; charset=${charset}` }, encoded), 415, 'UNSUPPORTED_MEDIA_TYPE')
    })

    it.each(['gzip', 'deflate', 'br'])('refuses Content-Encoding: %s', async (encoding) => {
      expectProblem(await post({ 'content-type': 'application/json', 'content-encoding': encoding }, gzipSync(body)), 415, 'UNSUPPORTED_MEDIA_TYPE')
    })

    it.each(['application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json'])('accepts %s', async (type) => {
      expect((await post({ 'content-type': type }, body)).statusCode).toBe(201)
    })

    it('accepts Content-Encoding: identity', async () => {
      expect((await post({ 'content-type': 'application/json', 'content-encoding': 'identity' }, body)).statusCode).toBe(201)
    })
  })
})
