import { describe, expect, it } from 'vitest'
import { useTestApp } from '../support/helper.js'
import { createClass, enrol, messageRows, minutesFromNow, post, problem, send } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'

const DAY_MINUTES = 24 * 60

/**
 * `count` recipients of one phone whose names all differ ("", " ", "  ", ... then digits, so 10,000 of them stay
 * within the body limit): every rendering differs, so none merge.
 */
const onePhone = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ phone: '010-2222-3333', name: index < 10 ? ' '.repeat(index) : String(index) }))

describe('limits of one send', () => {
  const app = useTestApp()

  describe('how far ahead scheduledAt may be', () => {
    it('refuses a send scheduled for 9999-12-31 with SCHEDULED_AT_TOO_FAR and stores nothing', async () => {
      const { tenant, owner } = await academy(app.current)
      const response = await send(app.current, owner, {
        title: 'Notice',
        content: 'Hello',
        recipients: [{ phone: '010-1234-5678' }],
        scheduledAt: '9999-12-31T00:00:00Z',
      })
      expect(problem(response)).toEqual({ status: 400, code: 'SCHEDULED_AT_TOO_FAR' })
      expect(await messageRows(tenant)).toEqual([])
    })

    it('accepts 89 days ahead and refuses 91 (SVC_SMS_MAX_SCHEDULE_DAYS is 90)', async () => {
      const { owner } = await academy(app.current)
      const at = (days: number) =>
        send(app.current, owner, { title: 'N', content: 'Hi', recipients: [{ phone: '010-1234-5678' }], scheduledAt: minutesFromNow(days * DAY_MINUTES) })
      expect((await at(89)).statusCode).toBe(201)
      expect(problem(await at(91))).toEqual({ status: 400, code: 'SCHEDULED_AT_TOO_FAR' })
    })

    it('refuses a class send scheduled too far ahead', async () => {
      const { tenant, owner } = await academy(app.current)
      const { id } = await createClass(tenant)
      await enrol(tenant, id)
      const response = await post(app.current, `/v1/sms/send/class/${id}`, owner, {
        title: 'Notice',
        content: 'Hello {name}',
        scheduledAt: '9999-12-31T00:00:00Z',
      })
      expect(problem(response)).toEqual({ status: 400, code: 'SCHEDULED_AT_TOO_FAR' })
      expect(await messageRows(tenant)).toEqual([])
    })
  })

  describe('recipients sharing one phone', () => {
    it('refuses 10,000 recipients on one phone whose names all differ, and stores nothing', async () => {
      const { tenant, owner } = await academy(app.current)
      const response = await send(app.current, owner, { title: 'Notice', content: 'Hello {name}', recipients: onePhone(10_000) })
      expect(problem(response)).toEqual({ status: 400, code: 'TOO_MANY_FOR_ONE_PHONE' })
      expect(await messageRows(tenant)).toEqual([])
    })

    it('accepts five on one phone and refuses six (SVC_SMS_MAX_PER_PHONE is 5), counted after merging', async () => {
      const { owner } = await academy(app.current)
      const five = await send(app.current, owner, { title: 'N', content: 'Hi {name}', recipients: onePhone(5) })
      expect(five.statusCode).toBe(201)
      expect(five.json().recipientCount).toBe(5)
      expect(problem(await send(app.current, owner, { title: 'N', content: 'Hi {name}', recipients: onePhone(6) }))).toEqual({
        status: 400,
        code: 'TOO_MANY_FOR_ONE_PHONE',
      })
      // Without a placeholder the six render alike and merge into one recipient: nothing to refuse.
      const merged = await send(app.current, owner, { title: 'N', content: 'Hi', recipients: onePhone(6) })
      expect(merged.statusCode).toBe(201)
      expect(merged.json().recipientCount).toBe(1)
    })

    it('refuses a send to a saved group holding six recipients of one phone', async () => {
      const { tenant, owner } = await academy(app.current)
      const group = await post(app.current, '/v1/sms/recipient-groups', owner, { name: 'Family', recipients: onePhone(6) })
      expect(group.statusCode).toBe(201)
      const response = await send(app.current, owner, { title: 'N', content: 'Hi {name}', recipientGroupId: group.json().id })
      expect(problem(response)).toEqual({ status: 400, code: 'TOO_MANY_FOR_ONE_PHONE' })
      expect(await messageRows(tenant)).toEqual([])
    })

    it('refuses a class send whose guardians share one phone more than five times', async () => {
      const { tenant, owner } = await academy(app.current)
      const { id } = await createClass(tenant)
      for (let i = 0; i < 6; i++) await enrol(tenant, id, { guardianPhone: '010-4444-5555' })
      const response = await post(app.current, `/v1/sms/send/class/${id}`, owner, { title: 'N', content: 'Hello {name}' })
      expect(problem(response)).toEqual({ status: 400, code: 'TOO_MANY_FOR_ONE_PHONE' })
      expect(await messageRows(tenant)).toEqual([])
    })
  })
})
