import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { setOptOutNumber } from './advertising-fixtures.js'
import { storedAuditEvents } from '../audit/audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner as ownerDb } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

const OPT_OUT_NUMBER = '0801234567'

function settingsRow(tenant: { id: number }) {
  return ownerDb()
    .selectFrom('smsAdvertisingSettings')
    .select(['optOutNumber', 'updatedBy'])
    .where('tenantId', '=', tenant.id)
    .executeTakeFirst()
}

describe('advertising settings', () => {
  const app = useTestApp()

  const get = (who?: Actor) => app.current.inject({ method: 'GET', url: '/v1/sms/advertising', headers: who?.headers ?? {} })
  const put = (who: Actor | undefined, payload: unknown) =>
    app.current.inject({ method: 'PUT', url: '/v1/sms/advertising', headers: who?.headers ?? {}, payload: payload as object })

  describe('GET /v1/sms/advertising', () => {
    it('answers a null number before the owner sets one', async () => {
      const { owner } = await academy(app.current)
      const response = await get(owner)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ optOutNumber: null, consentRequired: true })
    })

    it.each(['owner', 'manager', 'instructor'] as const)('answers the stored digits to the %s', async (role) => {
      const people = await academy(app.current)
      await setOptOutNumber(app.current, people.owner, '080-123-4567')
      const response = await get(people[role])
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ optOutNumber: OPT_OUT_NUMBER, consentRequired: true })
    })

    it('requires a token (AUTH_002) and refuses a student (AUTH_008)', async () => {
      const { student } = await academy(app.current)
      expectProblem(await get(), 401, 'AUTH_002')
      expectProblem(await get(student), 403, 'AUTH_008')
    })

    it("never shows another tenant's number", async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      await setOptOutNumber(app.current, first.owner, '080-123-4567')
      expect((await get(second.owner)).json()).toEqual({ optOutNumber: null, consentRequired: true })
      await setOptOutNumber(app.current, second.owner, '080-765-4321')
      expect((await get(first.owner)).json()).toEqual({ optOutNumber: OPT_OUT_NUMBER, consentRequired: true })
      expect((await get(second.owner)).json()).toEqual({ optOutNumber: '0807654321', consentRequired: true })
    })

    it("gives the runtime role no row of the other tenant's settings", async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      await setOptOutNumber(app.current, first.owner, '080-123-4567')
      const read = (tenantId: number) =>
        withTenant(app.current.db, tenantId, (trx) =>
          trx.selectFrom('smsAdvertisingSettings').select('optOutNumber').where('tenantId', '=', first.tenant.id).execute(),
        )
      expect(await read(second.tenant.id)).toEqual([])
      expect(await read(first.tenant.id)).toEqual([{ optOutNumber: OPT_OUT_NUMBER }])
    })
  })

  describe('PUT /v1/sms/advertising', () => {
    it.each([
      ['080-123-4567', OPT_OUT_NUMBER],
      ['080 123 4567', OPT_OUT_NUMBER],
      ['(080) 123-4567', OPT_OUT_NUMBER],
      ['+82 80 123 4567', OPT_OUT_NUMBER],
      ['080.123.4567', OPT_OUT_NUMBER],
      ['080-1234-5678', '08012345678'],
      ['08012345678', '08012345678'],
      ['+82-80-1234-5678', '08012345678'],
    ])('takes %s, stores and answers the digits %s', async (written, digits) => {
      const { tenant, owner, instructor } = await academy(app.current)
      const response = await put(owner, { optOutNumber: written })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ optOutNumber: digits, consentRequired: true })
      expect(await settingsRow(tenant)).toEqual({ optOutNumber: digits, updatedBy: owner.user.id })
      expect((await get(instructor)).json()).toEqual({ optOutNumber: digits, consentRequired: true })
    })

    it('replaces the number, and null removes it', async () => {
      const { tenant, owner } = await academy(app.current)
      await setOptOutNumber(app.current, owner, '080-123-4567')
      expect((await put(owner, { optOutNumber: '080-765-4321' })).json()).toEqual({ optOutNumber: '0807654321', consentRequired: true })
      const removed = await put(owner, { optOutNumber: null })
      expect(removed.statusCode).toBe(200)
      expect(removed.json()).toEqual({ optOutNumber: null, consentRequired: true })
      expect((await get(owner)).json()).toEqual({ optOutNumber: null, consentRequired: true })
      expect((await settingsRow(tenant))?.optOutNumber ?? null).toBeNull()
    })

    it('lets only the OWNER set it: no token AUTH_002, MANAGER, INSTRUCTOR and STUDENT AUTH_008, nothing stored', async () => {
      const { tenant, owner, manager, instructor, student } = await academy(app.current)
      const body = { optOutNumber: '080-123-4567' }
      expectProblem(await put(undefined, body), 401, 'AUTH_002')
      for (const refused of [manager, instructor, student]) expectProblem(await put(refused, body), 403, 'AUTH_008')
      expect(await settingsRow(tenant)).toBeUndefined()
      expect((await get(owner)).json()).toEqual({ optOutNumber: null, consentRequired: true })
    })

    it.each([
      ['letters', '080-abc-4567'],
      ['too short', '080-12'],
      ['no trunk 0', '1234567890'],
      ['over-long', `080-123-4567${' 1'.repeat(20)}`],
      ['blank', '   '],
      // The frame promises a free refusal: only a free 080 number keeps that promise.
      ['a mobile number', '010-1234-5678'],
      ['a Seoul number', '02-1234-5678'],
      ['a representative number', '1588-1234'],
      ['an internet phone number', '070-1234-5678'],
      ['a regional number', '031-123-4567'],
      ['080 and 6 digits', '080-123-456'],
      ['080 and 9 digits', '080-1234-56789'],
      ['another country', '+1 080 123 4567'],
    ])('refuses a number with %s (INVALID_PHONE_NUMBER) and keeps the one stored', async (_case, written) => {
      const { owner } = await academy(app.current)
      await setOptOutNumber(app.current, owner, '080-123-4567')
      expectProblem(await put(owner, { optOutNumber: written }), 400, 'INVALID_PHONE_NUMBER')
      expect((await get(owner)).json()).toEqual({ optOutNumber: OPT_OUT_NUMBER, consentRequired: true })
    })

    it.each([
      ['no body at all', undefined],
      ['a missing field', {}],
      ['a number where text is due', { optOutNumber: 801234567 }],
      ['an array', { optOutNumber: ['080-123-4567'] }],
      ['an unknown field', { optOutNumber: '080-123-4567', label: 'ours' }],
    ])('refuses a body with %s (VALIDATION_FAILED), storing nothing', async (_case, body) => {
      const { tenant, owner } = await academy(app.current)
      expectProblem(await put(owner, body), 400, 'VALIDATION_FAILED')
      expect(await settingsRow(tenant)).toBeUndefined()
    })
  })

  describe('ADVERTISING_SETTINGS_CHANGED', () => {
    it('records the owner, no target id and the number masked, never whole', async () => {
      const { tenant, owner } = await academy(app.current)
      await setOptOutNumber(app.current, owner, '080-123-4567')
      const [event, ...others] = await storedAuditEvents(tenant, 'ADVERTISING_SETTINGS_CHANGED')
      expect(others).toEqual([])
      expect(event).toMatchObject({ actorId: owner.user.id, targetType: 'ADVERTISING_SETTINGS', targetId: null })
      expect(event!.details).toEqual({ optOutNumber: '080-****-4567' })

      const listed = await app.current.inject({ method: 'GET', url: '/v1/audit-events?type=ADVERTISING_SETTINGS_CHANGED', headers: owner.headers })
      expect(listed.json()).toMatchObject({ total: 1, items: [{ actorId: owner.user.id, details: { optOutNumber: '080-****-4567' } }] })
      for (const whole of [OPT_OUT_NUMBER, '080-123-4567', '1234567']) expect(listed.body).not.toContain(whole)
    })

    it('records a change only: the same number written another way and a second null write nothing', async () => {
      const { tenant, owner } = await academy(app.current)
      await setOptOutNumber(app.current, owner, '080-123-4567')
      await setOptOutNumber(app.current, owner, '080 123 4567')
      await setOptOutNumber(app.current, owner, '080-765-4321')
      await setOptOutNumber(app.current, owner, null)
      await setOptOutNumber(app.current, owner, null)
      const events = await storedAuditEvents(tenant, 'ADVERTISING_SETTINGS_CHANGED')
      expect(events.map((event) => event.details)).toEqual([
        { optOutNumber: '080-****-4567' },
        { optOutNumber: '080-****-4321' },
        { optOutNumber: null },
      ])
    })

    it('records nothing for a refused PUT', async () => {
      const { tenant, owner, manager } = await academy(app.current)
      expectProblem(await put(manager, { optOutNumber: '080-123-4567' }), 403, 'AUTH_008')
      expectProblem(await put(owner, { optOutNumber: '080-12' }), 400, 'INVALID_PHONE_NUMBER')
      expectProblem(await put(owner, { optOutNumber: 801234567 }), 400, 'VALIDATION_FAILED')
      expect(await storedAuditEvents(tenant)).toEqual([])
    })
  })
})
