import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { listOptOut, storedOptOuts } from './advertising-fixtures.js'
import { storedAuditEvents } from '../audit/audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { phones } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

const DIGITS = '01012345678'
const MASKED = '010-****-5678'
// The ways people write one number (docs/api.md#opt-out-list): one entry.
const WRITINGS = ['010-1234-5678', DIGITS, '+82 10 1234 5678', '(010) 1234-5678', '010.1234.5678']

describe('opt-out list', () => {
  const app = useTestApp()

  const list = (who: Actor | undefined, query = '') =>
    app.current.inject({ method: 'GET', url: `/v1/sms/opt-outs${query}`, headers: who?.headers ?? {} })
  const add = (who: Actor | undefined, payload: unknown) =>
    app.current.inject({ method: 'POST', url: '/v1/sms/opt-outs', headers: who?.headers ?? {}, payload: payload as object })
  const remove = (who: Actor | undefined, phone: string) =>
    app.current.inject({ method: 'DELETE', url: `/v1/sms/opt-outs/${encodeURIComponent(phone)}`, headers: who?.headers ?? {} })
  const listedPhones = async (who: Actor) => (await list(who)).json().items.map((item: { phone: string }) => item.phone)

  describe('POST /v1/sms/opt-outs', () => {
    it('answers 201 with the number masked and its source STAFF, storing its digits and who listed it', async () => {
      const { tenant, manager } = await academy(app.current)
      const response = await add(manager, { phone: '010-1234-5678' })
      expect(response.statusCode).toBe(201)
      const rows = await storedOptOuts(tenant)
      expect(rows).toEqual([{ phone: DIGITS, createdBy: manager.user.id, createdAt: expect.any(Date), source: 'STAFF' }])
      expect(response.json()).toEqual({ phone: MASKED, createdAt: rows[0]!.createdAt.toISOString(), source: 'STAFF' })
    })

    it('answers 200 with the existing entry for the same number written another way, keeping one row', async () => {
      const { tenant, owner } = await academy(app.current)
      const [first, ...again] = WRITINGS
      const created = await add(owner, { phone: first })
      expect(created.statusCode).toBe(201)
      for (const written of again) {
        const response = await add(owner, { phone: written })
        expect({ written, status: response.statusCode, body: response.json() }).toEqual({ written, status: 200, body: created.json() })
      }
      expect((await storedOptOuts(tenant)).map((row) => row.phone)).toEqual([DIGITS])
    })

    it.each([
      ['letters', '010-abcd-5678'],
      ['too short', '010-123'],
      ['no trunk 0', '1234567890'],
      ['over-long', `010${'1'.repeat(40)}`],
      ['blank', ''],
      ['full-width digits', '０１０-１２３４-５６７８'],
      ['a NUL character', '010-1234-5678\u0000'],
    ])('refuses a number with %s (INVALID_PHONE_NUMBER), storing nothing', async (_case, phone) => {
      const { tenant, owner } = await academy(app.current)
      expectProblem(await add(owner, { phone }), 400, 'INVALID_PHONE_NUMBER')
      expect(await storedOptOuts(tenant)).toEqual([])
    })

    it.each([
      ['no body at all', undefined],
      ['a missing field', {}],
      ['a number where text is due', { phone: 1012345678 }],
      ['null', { phone: null }],
      ['an unknown field', { phone: '010-1234-5678', reason: 'called the 080 line' }],
    ])('refuses a body with %s (VALIDATION_FAILED), storing nothing', async (_case, body) => {
      const { tenant, owner } = await academy(app.current)
      expectProblem(await add(owner, body), 400, 'VALIDATION_FAILED')
      expect(await storedOptOuts(tenant)).toEqual([])
    })
  })

  describe('GET /v1/sms/opt-outs', () => {
    it('answers an empty page before anything is listed', async () => {
      const { instructor } = await academy(app.current)
      const response = await list(instructor)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ items: [], page: 0, perPage: 20, total: 0, totalPages: 0, hasNext: false })
    })

    it('pages newest first with page and size, phones masked', async () => {
      const { tenant, owner } = await academy(app.current)
      // Listed in an order that is neither the numbers' order nor its reverse, so only the time orders the page.
      const [a, b, c, d, e] = phones(5, 1)
      const numbers = [c!, a!, e!, b!, d!]
      for (const phone of numbers) await listOptOut(app.current, owner, phone)
      const createdAt = new Map((await storedOptOuts(tenant)).map((row) => [row.phone, row.createdAt.toISOString()]))
      const newestFirst = [...numbers].reverse().map((phone) => {
        const digits = phone.replaceAll('-', '')
        return { phone: `010-****-${digits.slice(-4)}`, createdAt: createdAt.get(digits), source: 'STAFF' }
      })

      expect((await list(owner, '?size=2')).json()).toEqual({
        items: newestFirst.slice(0, 2),
        page: 0,
        perPage: 2,
        total: 5,
        totalPages: 3,
        hasNext: true,
      })
      expect((await list(owner, '?page=1&size=2')).json()).toEqual({
        items: newestFirst.slice(2, 4),
        page: 1,
        perPage: 2,
        total: 5,
        totalPages: 3,
        hasNext: true,
      })
      expect((await list(owner, '?page=2&size=2')).json()).toEqual({
        items: newestFirst.slice(4),
        page: 2,
        perPage: 2,
        total: 5,
        totalPages: 3,
        hasNext: false,
      })
      expect((await list(owner, '?page=9&size=2')).json()).toMatchObject({ items: [], total: 5, totalPages: 3, hasNext: false })
      expect((await list(owner)).json()).toMatchObject({ items: newestFirst, page: 0, perPage: 20, totalPages: 1 })
    })

    it.each(['?size=0', '?size=101', '?page=-1', '?page=1000001', '?size=abc', '?page=1.5'])(
      'refuses %s (VALIDATION_FAILED)',
      async (query) => {
        const { owner } = await academy(app.current)
        expectProblem(await list(owner, query), 400, 'VALIDATION_FAILED')
      },
    )
  })

  describe('DELETE /v1/sms/opt-outs/{phone}', () => {
    it('answers 204 and takes the number off; a second delete is 404 OPT_OUT_NOT_FOUND', async () => {
      const { tenant, owner, manager } = await academy(app.current)
      await listOptOut(app.current, owner, '010-1234-5678')
      await listOptOut(app.current, owner, '010-9999-0000')
      const removed = await remove(manager, DIGITS)
      expect(removed.statusCode).toBe(204)
      expect(removed.body).toBe('')
      expect((await storedOptOuts(tenant)).map((row) => row.phone)).toEqual(['01099990000'])
      expect(await listedPhones(owner)).toEqual(['010-****-0000'])
      expectProblem(await remove(manager, DIGITS), 404, 'OPT_OUT_NOT_FOUND')
    })

    it.each(['010-1234-5678', '+82 10 1234 5678'])('takes the number off when the path writes it %s', async (written) => {
      const { tenant, owner } = await academy(app.current)
      await listOptOut(app.current, owner, DIGITS)
      expect((await remove(owner, written)).statusCode).toBe(204)
      expect(await storedOptOuts(tenant)).toEqual([])
    })

    it('answers 404 OPT_OUT_NOT_FOUND for a valid number never listed', async () => {
      const { owner } = await academy(app.current)
      expectProblem(await remove(owner, DIGITS), 404, 'OPT_OUT_NOT_FOUND')
    })

    it.each([
      ['letters', '010-abcd-5678'],
      ['too short', '010123'],
      ['no trunk 0', '1234567890'],
      ['full-width digits', '０１０１２３４５６７８'],
      ['a zero-width space', '010\u200b12345678'],
    ])('refuses a path number with %s (INVALID_PHONE_NUMBER)', async (_case, phone) => {
      const { tenant, owner } = await academy(app.current)
      await listOptOut(app.current, owner, DIGITS)
      expectProblem(await remove(owner, phone), 400, 'INVALID_PHONE_NUMBER')
      expect(await storedOptOuts(tenant)).toHaveLength(1)
    })

    it('refuses a path longer than 32 characters (VALIDATION_FAILED)', async () => {
      const { owner } = await academy(app.current)
      expectProblem(await remove(owner, `010${'1'.repeat(30)}`), 400, 'VALIDATION_FAILED')
    })
  })

  describe('who may call', () => {
    it('requires a token on every route (AUTH_002)', async () => {
      expectProblem(await list(undefined), 401, 'AUTH_002')
      expectProblem(await add(undefined, { phone: DIGITS }), 401, 'AUTH_002')
      expectProblem(await remove(undefined, DIGITS), 401, 'AUTH_002')
    })

    it('refuses a student on every route (AUTH_008)', async () => {
      const { tenant, owner, student } = await academy(app.current)
      await listOptOut(app.current, owner, DIGITS)
      expectProblem(await list(student), 403, 'AUTH_008')
      expectProblem(await add(student, { phone: '010-9999-0000' }), 403, 'AUTH_008')
      expectProblem(await remove(student, DIGITS), 403, 'AUTH_008')
      expect((await storedOptOuts(tenant)).map((row) => row.phone)).toEqual([DIGITS])
    })

    it('lets an INSTRUCTOR read the list but neither add nor remove (AUTH_008)', async () => {
      const { tenant, owner, instructor } = await academy(app.current)
      await listOptOut(app.current, owner, DIGITS)
      expect(await listedPhones(instructor)).toEqual([MASKED])
      expectProblem(await add(instructor, { phone: '010-9999-0000' }), 403, 'AUTH_008')
      expectProblem(await remove(instructor, DIGITS), 403, 'AUTH_008')
      expect((await storedOptOuts(tenant)).map((row) => row.phone)).toEqual([DIGITS])
    })

    it('lets a MANAGER read, add and remove', async () => {
      const { manager } = await academy(app.current)
      expect((await add(manager, { phone: DIGITS })).statusCode).toBe(201)
      expect(await listedPhones(manager)).toEqual([MASKED])
      expect((await remove(manager, DIGITS)).statusCode).toBe(204)
      expect(await listedPhones(manager)).toEqual([])
    })
  })

  describe('another tenant', () => {
    it("never sees the other tenant's list", async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      await listOptOut(app.current, first.owner, DIGITS)
      expect((await list(second.owner)).json()).toMatchObject({ items: [], total: 0 })
    })

    it("cannot delete the other tenant's entry: 404, and the entry stays", async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      await listOptOut(app.current, first.owner, DIGITS)
      expectProblem(await remove(second.owner, DIGITS), 404, 'OPT_OUT_NOT_FOUND')
      expect((await storedOptOuts(first.tenant)).map((row) => row.phone)).toEqual([DIGITS])
      expect(await listedPhones(first.owner)).toEqual([MASKED])
    })

    it('keeps the same number listed in two tenants as two independent entries', async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      expect((await add(first.owner, { phone: DIGITS })).statusCode).toBe(201)
      expect((await add(second.owner, { phone: '010-1234-5678' })).statusCode).toBe(201)
      expect((await remove(first.owner, DIGITS)).statusCode).toBe(204)
      expect(await storedOptOuts(first.tenant)).toEqual([])
      expect((await storedOptOuts(second.tenant)).map((row) => row.phone)).toEqual([DIGITS])
      expect(await listedPhones(second.owner)).toEqual([MASKED])
    })

    it("gives the runtime role none of the other tenant's rows, even by number", async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      await listOptOut(app.current, first.owner, DIGITS)
      const seen = await withTenant(app.current.db, second.tenant.id, (trx) =>
        trx.selectFrom('smsOptOuts').select(['tenantId', 'phone']).where('phone', '=', DIGITS).where('tenantId', '=', first.tenant.id).execute(),
      )
      expect(seen).toEqual([])
      const own = await withTenant(app.current.db, first.tenant.id, (trx) =>
        trx.selectFrom('smsOptOuts').select('phone').where('tenantId', '=', first.tenant.id).execute(),
      )
      expect(own).toEqual([{ phone: DIGITS }])
    })
  })

  describe('OPT_OUT_ADDED / OPT_OUT_REMOVED', () => {
    it('records who added and who removed a number, masked, with no target id', async () => {
      const { tenant, owner, manager } = await academy(app.current)
      await listOptOut(app.current, manager, '010-1234-5678')
      expect((await remove(owner, DIGITS)).statusCode).toBe(204)
      const events = await storedAuditEvents(tenant)
      expect(events.map(({ type, actorId, targetType, targetId, details }) => ({ type, actorId, targetType, targetId, details }))).toEqual([
        { type: 'OPT_OUT_ADDED', actorId: manager.user.id, targetType: 'OPT_OUT', targetId: null, details: { phone: MASKED, source: 'STAFF' } },
        { type: 'OPT_OUT_REMOVED', actorId: owner.user.id, targetType: 'OPT_OUT', targetId: null, details: { phone: MASKED } },
      ])
    })

    it('never shows the whole number in the audit log answer', async () => {
      const { owner } = await academy(app.current)
      await listOptOut(app.current, owner, '010-1234-5678')
      expect((await remove(owner, DIGITS)).statusCode).toBe(204)
      const response = await app.current.inject({ method: 'GET', url: '/v1/audit-events', headers: owner.headers })
      expect(response.json().items.map((item: { type: string }) => item.type)).toEqual(['OPT_OUT_REMOVED', 'OPT_OUT_ADDED'])
      for (const whole of [DIGITS, '010-1234-5678', '1012345678', '1234-5678']) expect(response.body).not.toContain(whole)
    })

    it('writes nothing for a number listed again, a refused call or a second delete', async () => {
      const { tenant, owner, instructor } = await academy(app.current)
      for (const written of WRITINGS) await listOptOut(app.current, owner, written)
      expectProblem(await add(instructor, { phone: '010-9999-0000' }), 403, 'AUTH_008')
      expectProblem(await add(owner, { phone: '010-abcd-5678' }), 400, 'INVALID_PHONE_NUMBER')
      expectProblem(await remove(instructor, DIGITS), 403, 'AUTH_008')
      expect((await remove(owner, DIGITS)).statusCode).toBe(204)
      expectProblem(await remove(owner, DIGITS), 404, 'OPT_OUT_NOT_FOUND')
      expect((await storedAuditEvents(tenant)).map((event) => event.type)).toEqual(['OPT_OUT_ADDED', 'OPT_OUT_REMOVED'])
    })
  })
})
