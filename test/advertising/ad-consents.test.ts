import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { storedAuditEvents } from '../audit/audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { phones } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'
import { listOptOut, storedConsents } from './advertising-fixtures.js'
import { seoul, useAppAt } from './advertisement-send-fixtures.js'

const DIGITS = '01012345678'
const MASKED = '010-****-5678'
const EVIDENCE = '수강 신청서 2026-031, 광고 수신 동의란 서명'

describe('consents to advertising (/v1/sms/ad-consents)', () => {
  // The consent's time is the service's clock: a test moves it to record consents at known moments.
  const start = seoul('2026-03-10T12:00:00')
  const app = useAppAt(start)

  const list = (who: Actor | undefined, query = '') =>
    app.current.inject({ method: 'GET', url: `/v1/sms/ad-consents${query}`, headers: who?.headers ?? {} })
  const add = (who: Actor | undefined, payload: unknown) =>
    app.current.inject({ method: 'POST', url: '/v1/sms/ad-consents', headers: who?.headers ?? {}, payload: payload as object })
  const withdraw = (who: Actor | undefined, phone: string) =>
    app.current.inject({ method: 'DELETE', url: `/v1/sms/ad-consents/${encodeURIComponent(phone)}`, headers: who?.headers ?? {} })
  const consent = (phone = '010-1234-5678', source = 'WRITTEN') => ({ phone, source, evidence: EVIDENCE })

  describe('POST', () => {
    it('answers 201 with the number masked and stores who agreed, how, the evidence, when and who recorded it', async () => {
      app.setTime(start)
      const { tenant, manager } = await academy(app.current)
      const response = await add(manager, consent())
      expect(response.statusCode).toBe(201)
      expect(response.json()).toEqual({
        phone: MASKED,
        source: 'WRITTEN',
        evidence: EVIDENCE,
        consentedAt: start.toISOString(),
        confirmedAt: start.toISOString(),
        createdBy: manager.user.id,
      })
      expect(await storedConsents(tenant)).toEqual([
        {
          phone: DIGITS,
          source: 'WRITTEN',
          evidence: EVIDENCE,
          consentedAt: start,
          confirmedAt: start,
          createdBy: manager.user.id,
          noticeSmsId: null,
          noticeFor: null,
        },
      ])
    })

    it('answers 200 for a number that consented already: source and evidence replaced, consentedAt kept, confirmedAt renewed', async () => {
      app.setTime(start)
      const { tenant, owner, manager } = await academy(app.current)
      expect((await add(manager, consent('010-1234-5678', 'ORAL'))).statusCode).toBe(201)
      const later = new Date(start.getTime() + 86_400_000)
      app.setTime(later)
      const again = await add(owner, { phone: '+82 10 1234 5678', source: 'ONLINE', evidence: 'web form 77' })
      expect(again.statusCode).toBe(200)
      expect(again.json()).toEqual({
        phone: MASKED,
        source: 'ONLINE',
        evidence: 'web form 77',
        consentedAt: start.toISOString(),
        confirmedAt: later.toISOString(),
        createdBy: manager.user.id,
      })
      expect(await storedConsents(tenant)).toHaveLength(1)
    })

    it('refuses a number on the opt-out list with 409 OPT_OUT_LISTED until the refusal is removed on purpose', async () => {
      app.setTime(start)
      const { tenant, owner } = await academy(app.current)
      await listOptOut(app.current, owner, '010-1234-5678')
      expectProblem(await add(owner, consent('01012345678')), 409, 'OPT_OUT_LISTED')
      expect(await storedConsents(tenant)).toEqual([])
      expect((await app.current.inject({ method: 'DELETE', url: `/v1/sms/opt-outs/${DIGITS}`, headers: owner.headers })).statusCode).toBe(204)
      expect((await add(owner, consent('01012345678'))).statusCode).toBe(201)
    })

    it.each([
      ['a bad number', { phone: 'not a phone', source: 'WRITTEN', evidence: EVIDENCE }, 'INVALID_PHONE_NUMBER'],
      ['an unknown source', { phone: DIGITS, source: 'EMAIL', evidence: EVIDENCE }, 'VALIDATION_FAILED'],
      ['empty evidence', { phone: DIGITS, source: 'WRITTEN', evidence: '' }, 'VALIDATION_FAILED'],
      ['evidence over 500 characters', { phone: DIGITS, source: 'WRITTEN', evidence: 'x'.repeat(501) }, 'VALIDATION_FAILED'],
      ['a missing source', { phone: DIGITS, evidence: EVIDENCE }, 'VALIDATION_FAILED'],
      ['an unknown field', { ...consent(), consentedAt: '2020-01-01T00:00:00Z' }, 'VALIDATION_FAILED'],
    ] as const)('refuses %s with 400 %s, storing nothing', async (_, payload, code) => {
      const { tenant, owner } = await academy(app.current)
      expectProblem(await add(owner, payload), 400, code)
      expect(await storedConsents(tenant)).toEqual([])
    })

    it('is for OWNER and MANAGER: an instructor or a student gets AUTH_008, no token AUTH_002', async () => {
      const { tenant, instructor, student } = await academy(app.current)
      expectProblem(await add(instructor, consent()), 403, 'AUTH_008')
      expectProblem(await add(student, consent()), 403, 'AUTH_008')
      expectProblem(await add(undefined, consent()), 401, 'AUTH_002')
      expect(await storedConsents(tenant)).toEqual([])
    })
  })

  describe('GET', () => {
    it('pages newest first to every staff member, masked, and filters on one number in any writing', async () => {
      const { owner, instructor } = await academy(app.current)
      const [a, b, c] = phones(3, 7)
      for (const [index, phone] of [a!, b!, c!].entries()) {
        app.setTime(new Date(start.getTime() + index * 60_000))
        await add(owner, consent(phone))
      }
      const page = await list(instructor, '?size=2')
      expect(page.statusCode).toBe(200)
      const masked = (phone: string) => `010-****-${phone.replaceAll('-', '').slice(-4)}`
      expect(page.json()).toMatchObject({ page: 0, perPage: 2, total: 3, totalPages: 2, hasNext: true })
      expect(page.json().items.map((item: { phone: string }) => item.phone)).toEqual([masked(c!), masked(b!)])
      const one = await list(owner, `?phone=${encodeURIComponent(a!.replaceAll('-', ''))}`)
      expect(one.json()).toMatchObject({ total: 1, items: [{ phone: masked(a!), source: 'WRITTEN', evidence: EVIDENCE }] })
      expect(one.body).not.toContain(a!.replaceAll('-', ''))
      expectProblem(await list(owner, '?phone=abc'), 400, 'INVALID_PHONE_NUMBER')
      expectProblem(await list(owner, '?size=0'), 400, 'VALIDATION_FAILED')
    })

    it("never shows another academy's consents, through the API or under row-level security", async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      await add(first.owner, consent())
      expect((await list(second.owner)).json()).toMatchObject({ total: 0, items: [] })
      expectProblem(await withdraw(second.owner, DIGITS), 404, 'AD_CONSENT_NOT_FOUND')
      const rows = await withTenant(app.current.db, second.tenant.id, (trx) => trx.selectFrom('smsAdConsents').selectAll().execute())
      expect(rows).toEqual([])
      expect(await storedConsents(first.tenant)).toHaveLength(1)
    })

    it('refuses a student (AUTH_008) and a request without a token (AUTH_002)', async () => {
      const { student } = await academy(app.current)
      expectProblem(await list(student), 403, 'AUTH_008')
      expectProblem(await list(undefined), 401, 'AUTH_002')
    })
  })

  describe('DELETE', () => {
    it('withdraws a consent (204), in any writing; a second withdrawal is 404 AD_CONSENT_NOT_FOUND', async () => {
      const { tenant, owner, manager, instructor } = await academy(app.current)
      await add(owner, consent())
      expectProblem(await withdraw(instructor, DIGITS), 403, 'AUTH_008')
      expect((await withdraw(manager, '010-1234-5678')).statusCode).toBe(204)
      expect(await storedConsents(tenant)).toEqual([])
      expectProblem(await withdraw(manager, DIGITS), 404, 'AD_CONSENT_NOT_FOUND')
      expectProblem(await withdraw(manager, 'abc'), 400, 'INVALID_PHONE_NUMBER')
    })
  })

  describe('AD_CONSENT_ADDED / AD_CONSENT_WITHDRAWN', () => {
    it('records who recorded, renewed and withdrew a consent, the number masked, never whole', async () => {
      const { tenant, owner, manager } = await academy(app.current)
      await add(manager, consent())
      await add(owner, consent(DIGITS, 'ORAL'))
      await withdraw(owner, DIGITS)
      const events = await storedAuditEvents(tenant)
      expect(events.map(({ type, actorId, targetType, targetId, details }) => ({ type, actorId, targetType, targetId, details }))).toEqual([
        { type: 'AD_CONSENT_ADDED', actorId: manager.user.id, targetType: 'AD_CONSENT', targetId: null, details: { phone: MASKED, source: 'WRITTEN', renewed: false } },
        { type: 'AD_CONSENT_ADDED', actorId: owner.user.id, targetType: 'AD_CONSENT', targetId: null, details: { phone: MASKED, source: 'ORAL', renewed: true } },
        { type: 'AD_CONSENT_WITHDRAWN', actorId: owner.user.id, targetType: 'AD_CONSENT', targetId: null, details: { phone: MASKED } },
      ])
      const response = await app.current.inject({ method: 'GET', url: '/v1/audit-events', headers: owner.headers })
      for (const whole of [DIGITS, '010-1234-5678', '1012345678']) expect(response.body).not.toContain(whole)
    })
  })
})
