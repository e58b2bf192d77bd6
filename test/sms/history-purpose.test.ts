import { describe, expect, it } from 'vitest'
import { listOptOut, recordConsents, setOptOutNumber } from '../advertising/advertising-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { send } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

// Noon in Seoul: advertisements are accepted whatever the real time of the run (quiet hours 21:00-08:00).
const DAYTIME = () => new Date('2026-11-28T03:00:00Z')

describe('GET /v1/sms/history?purpose=', () => {
  const app = useTestApp({ clock: DAYTIME })

  const history = (who: Actor, query: string) => app.current.inject({ method: 'GET', url: `/v1/sms/history${query}`, headers: who.headers })

  /** A tenant with one notice and one advertisement, both to a listed number and one that is not (which consented). */
  async function twoMessages() {
    const people = await academy(app.current)
    await setOptOutNumber(app.current, people.owner, '080-123-4567')
    await listOptOut(app.current, people.owner, '010-1111-2222')
    await recordConsents(people.tenant, ['010-3333-4444'])
    const to = [
      { phone: '010-1111-2222', name: 'Kim' },
      { phone: '010-3333-4444', name: 'Lee' },
    ]
    const notice = await send(app.current, people.owner, { recipients: to, title: 'Notice', content: 'Class moves to room 3' })
    const ad = await send(app.current, people.owner, { recipients: to, title: 'Winter', content: 'Winter course, 10% off', purpose: 'ADVERTISEMENT' })
    expect([notice.statusCode, ad.statusCode]).toEqual([201, 201])
    return { ...people, noticeId: notice.json().id as number, adId: ad.json().id as number }
  }

  it('lists only advertisements with purpose=ADVERTISEMENT, carrying purpose and optedOutCount', async () => {
    const { owner, adId } = await twoMessages()
    const response = await history(owner, '?purpose=ADVERTISEMENT')
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ total: 1, items: [{ id: adId, purpose: 'ADVERTISEMENT', optedOutCount: 1, recipientCount: 2 }] })
    expect(response.json().items).toHaveLength(1)
  })

  it('lists only notices with purpose=INFORMATIONAL, the listed number counted for nothing', async () => {
    const { owner, noticeId } = await twoMessages()
    const response = await history(owner, '?purpose=INFORMATIONAL')
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ total: 1, items: [{ id: noticeId, purpose: 'INFORMATIONAL', optedOutCount: 0, recipientCount: 2 }] })
    expect(response.json().items).toHaveLength(1)
  })

  it('lists both without the filter, newest first', async () => {
    const { owner, noticeId, adId } = await twoMessages()
    const items = (await history(owner, '')).json().items as { id: number; purpose: string }[]
    expect(items.map(({ id, purpose }) => ({ id, purpose }))).toEqual([
      { id: adId, purpose: 'ADVERTISEMENT' },
      { id: noticeId, purpose: 'INFORMATIONAL' },
    ])
  })

  it.each(['bogus', 'advertisement', ''])('refuses purpose=%s (VALIDATION_FAILED)', async (purpose) => {
    const { owner } = await academy(app.current)
    expectProblem(await history(owner, `?purpose=${purpose}`), 400, 'VALIDATION_FAILED')
  })
})
