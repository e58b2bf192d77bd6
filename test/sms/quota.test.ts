import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { owner, type TenantRow } from '../support/fixtures.js'
import { until } from '../support/auth-fixtures.js'
import { buildTestApp, itConcurrent, itPostgres, useTestApp } from '../support/helper.js'
import { blockedBy, holdLocks } from '../support/lock-holder.js'
import { createClass, enrol, keyRows, messageRows, minutesFromNow, newKey, post, recipientRows, recipients, send } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

// Asia/Seoul (the default SVC_TIME_ZONE) is UTC+9 all year: its midnight is 15:00 UTC.
const secondsToNextSeoulDay = () => {
  const now = new Date()
  const todayAt15 = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 15)
  return ((todayAt15 > now.getTime() ? todayAt15 : todayAt15 + 86_400_000) - now.getTime()) / 1000
}

/** A time zone whose date differs from the UTC date right now (one of the two always does). */
const zoneOnAnotherDate = () => (new Date().getUTCHours() >= 12 ? 'Pacific/Kiritimati' : 'Etc/GMT+12')

describe('per-tenant daily recipient quota', () => {
  const app = useTestApp({ env: { SVC_SMS_TENANT_DAILY_RECIPIENTS: '5' } })

  it('answers 429 SMS_QUOTA_EXCEEDED with Retry-After to the next local midnight (SVC_TIME_ZONE) beyond the quota, and creates nothing', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    expect((await send(app.current, sender, { recipients: recipients(3), title: 'T', content: 'Hi' })).statusCode).toBe(201)
    const refused = await send(app.current, sender, { recipients: recipients(3), title: 'T', content: 'Hi' })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().code).toBe('SMS_QUOTA_EXCEEDED')
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    expect(Math.abs(retryAfter - secondsToNextSeoulDay())).toBeLessThan(5)
    expect(await messageRows(tenant)).toHaveLength(1)
    // Exactly up to the quota still goes.
    expect((await send(app.current, sender, { recipients: recipients(2), title: 'T', content: 'Hi' })).statusCode).toBe(201)
  })

  it('applies to group sends and class sends, and not to another tenant', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    const group = await post(app.current, '/v1/sms/recipient-groups', sender, { name: 'G', recipients: recipients(4) })
    expect((await send(app.current, sender, { recipientGroupId: group.json().id, title: 'T', content: 'Hi' })).statusCode).toBe(201)
    expect((await send(app.current, sender, { recipientGroupId: group.json().id, title: 'T', content: 'Hi' })).statusCode).toBe(429)
    const math = await createClass(tenant)
    await enrol(tenant, math.id, { guardianPhone: '010-1111-0001' })
    await enrol(tenant, math.id, { guardianPhone: '010-1111-0002' })
    const classSend = await post(app.current, `/v1/sms/send/class/${math.id}`, sender, { title: 'T', content: 'Hi' })
    expect(classSend.statusCode).toBe(429)
    expect(await messageRows(tenant)).toHaveLength(1)

    const other = await academy(app.current)
    expect((await send(app.current, other.owner, { recipients: recipients(5), title: 'T', content: 'Hi' })).statusCode).toBe(201)
  })

  it('counts a scheduled send on acceptance and gives its recipients back when it is cancelled', async () => {
    const { owner: sender } = await academy(app.current)
    const scheduled = await send(app.current, sender, { recipients: recipients(4), title: 'T', content: 'Hi', scheduledAt: minutesFromNow(60) })
    expect(scheduled.statusCode).toBe(201)
    expect((await send(app.current, sender, { recipients: recipients(2), title: 'T', content: 'Hi' })).statusCode).toBe(429)
    const cancel = await app.current.inject({ method: 'POST', url: `/v1/sms/history/${scheduled.json().id}/cancel`, headers: sender.headers })
    expect(cancel.statusCode).toBe(200)
    expect((await send(app.current, sender, { recipients: recipients(5), title: 'T', content: 'Hi' })).statusCode).toBe(201)
  })

  it('is forgotten by the minute purge once older than the UTC day before (no zone\'s today), while today\'s count still holds', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    expect((await send(app.current, sender, { recipients: recipients(3), title: 'T', content: 'Hi' })).statusCode).toBe(201)
    await sql`
      insert into sms_daily_usage (tenant_id, day, recipients)
      select ${tenant.id}, (now() at time zone 'UTC')::date - back, 5 from generate_series(1, 3) as back
      on conflict do nothing`.execute(owner())
    const days = () =>
      sql<{ back: number; recipients: number }>`
        select (now() at time zone 'UTC')::date - day as back, recipients from sms_daily_usage
        where tenant_id = ${tenant.id} order by day desc`
        .execute(owner())
        .then(({ rows }) => rows)
    // Today in Seoul is the UTC date or the one after it.
    const today = (await days())[0]!
    expect([0, -1]).toContain(today.back)
    expect(today.recipients).toBe(3)
    expect(await app.current.purgeExpired()).toBeGreaterThanOrEqual(2)
    expect(await days()).toEqual([today, { back: 1, recipients: 5 }])
    expect((await send(app.current, sender, { recipients: recipients(3), title: 'T', content: 'Hi' })).statusCode).toBe(429)
  })

  it('counts on the local day of SVC_TIME_ZONE: a full counter of another date does not refuse a send', async () => {
    const zone = zoneOnAnotherDate()
    const local = await buildTestApp({ SVC_SMS_TENANT_DAILY_RECIPIENTS: '5', SVC_TIME_ZONE: zone })
    const utc = await buildTestApp({ SVC_SMS_TENANT_DAILY_RECIPIENTS: '5', SVC_TIME_ZONE: 'UTC' })
    try {
      const { tenant, owner: sender } = await academy(local)
      await sql`insert into sms_daily_usage (tenant_id, day, recipients)
        values (${tenant.id}, (now() at time zone 'UTC')::date, 5)`.execute(owner())
      // The counter of the UTC date is full: on UTC days the tenant is done for today ...
      expect((await send(utc, sender, { recipients: recipients(1), title: 'T', content: 'Hi' })).statusCode).toBe(429)
      // ... but where the local date is another one, that counter is not today's.
      expect((await send(local, sender, { recipients: recipients(5), title: 'T', content: 'Hi' })).statusCode).toBe(201)
      const { rows } = await sql<{ day: string; recipients: number }>`
        select to_char(day, 'YYYY-MM-DD') as day, recipients from sms_daily_usage where tenant_id = ${tenant.id} order by day`.execute(owner())
      const localDate = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date())
      expect(rows.find((row) => row.day === localDate)).toEqual({ day: localDate, recipients: 5 })
    } finally {
      await Promise.all([local.close(), utc.close()])
    }
  })

  itConcurrent('never accepts more than the quota under concurrent sends', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => send(app.current, sender, { recipients: recipients(2), title: 'T', content: 'Hi' })),
    )
    expect(answers.filter((answer) => answer.statusCode === 201)).toHaveLength(2)
    expect(answers.filter((answer) => answer.statusCode === 429)).toHaveLength(6)
    expect(await messageRows(tenant)).toHaveLength(2)
  })

  /** Starts a send by `sender` that stays in its transaction, waiting at its message insert, until released. */
  async function sendHeldOpen(sender: Actor, count: number) {
    // Holds the sender's history counter row: the message insert's statement trigger (svc_count_inserted_sms) waits
    // for it, mid-transaction, after the quota was reserved.
    const hold = await holdLocks((trx) =>
      sql`
        insert into sms_message_counts as c (tenant_id, sender_id, messages) values (${sender.tenant.id}, ${sender.user.id}, 0)
        on conflict (tenant_id, sender_id) do update set messages = c.messages`.execute(trx),
    )
    const answer = send(app.current, sender, { recipients: recipients(count), title: 'T', content: 'Hi' })
    let pid = 0
    await until(async () => ((pid = (await blockedBy(hold.pid))[0]?.pid ?? 0), pid > 0))
    return { pid, answer, release: hold.release }
  }
  const usage = async (tenant: TenantRow) =>
    (await sql<{ recipients: number }>`select recipients from sms_daily_usage where tenant_id = ${tenant.id}`.execute(owner())).rows

  itPostgres('keeps the tenant\'s counter unlocked while a send is still in its transaction, so other sends never wait for it', async () => {
    const { tenant, owner: slowSender, manager: otherSender } = await academy(app.current)
    const slow = await sendHeldOpen(slowSender, 2)
    try {
      let answered: number | null = null
      const other = send(app.current, otherSender, { recipients: recipients(2), title: 'T', content: 'Hi' }).then((response) => {
        answered = response.statusCode
      })
      // Either the other send answers, or it is seen waiting for the slow one's lock on the counter row.
      await until(async () => answered !== null || (await blockedBy(slow.pid)).length > 0)
      expect(answered).toBe(201)
      await other
    } finally {
      await slow.release()
    }
    expect((await slow.answer).statusCode).toBe(201)
    expect(await usage(tenant)).toEqual([{ recipients: 4 }])
  })

  itPostgres('refuses at commit a send whose recipients stopped fitting while it was at work, and keeps none of it', async () => {
    const { tenant, owner: slowSender, manager: otherSender } = await academy(app.current)
    const key = newKey()
    const slow = await sendHeldOpen(slowSender, 2)
    try {
      // Fits when the slow send checked (0 + 2 of 5), and takes 4 of the 5 before the slow send reaches its commit.
      expect((await send(app.current, otherSender, { recipients: recipients(4), title: 'T', content: 'Hi' }, key)).statusCode).toBe(201)
    } finally {
      await slow.release()
    }
    const refused = await slow.answer
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(refused.json().code).toBe('SMS_QUOTA_EXCEEDED')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect((await messageRows(tenant)).map((row) => row.senderId)).toEqual([otherSender.user.id])
    expect(await usage(tenant)).toEqual([{ recipients: 4 }])
    // Its idempotency key was given back with it: only the committed send's key remains.
    expect((await keyRows(tenant)).map((row) => row.key)).toEqual([key])
  })

  it('counts merged recipients once: one number written five ways is one recipient', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    const fiveWays = ['010-1234-5678', '01012345678', '+82 10 1234 5678', '+821012345678', '010 1234 5678']
    const response = await send(app.current, sender, {
      recipients: fiveWays.map((phone, index) => ({ phone, name: `Kim ${index}` })),
      title: 'T',
      content: 'Hi',
    })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({ recipientCount: 1, estimatedSegments: 1, totalPrice: 20 })
    expect(response.json().recipients).toEqual([expect.objectContaining({ name: 'Kim 0' })])
    expect(await recipientRows(tenant, response.json().id)).toHaveLength(1)
    // Four left of five.
    expect((await send(app.current, sender, { recipients: recipients(4), title: 'T', content: 'Hi' })).statusCode).toBe(201)
  })
})

describe('recipients merged within one send', () => {
  const app = useTestApp()

  it('merges the same phone with the same rendering, keeps siblings whose rendering differs', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    const response = await send(app.current, sender, {
      recipients: [
        { phone: '010-1234-5678', name: 'Kim', studentId: 1 },
        { phone: '010-2222-3333', name: 'Park' },
        { phone: '+82 10 1234 5678', name: 'Lee', studentId: 2 },
        { phone: '01012345678', name: 'Kim', studentId: 3 },
      ],
      title: 'T',
      content: 'Hello {name}',
    })
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(body.recipientCount).toBe(3)
    expect(body.recipients.map((recipient: { name: string; studentId: number | null }) => [recipient.name, recipient.studentId])).toEqual([
      ['Kim', 1],
      ['Park', null],
      ['Lee', 2],
    ])
    const rows = await recipientRows(tenant, body.id)
    expect(rows.map((row) => [row.recipientIndex, row.name])).toEqual([
      [0, 'Kim'],
      [1, 'Park'],
      [2, 'Lee'],
    ])
    const stored = await owner().selectFrom('smsMessages').select(['recipientCount', 'totalPrice']).where('id', '=', body.id).executeTakeFirstOrThrow()
    expect(stored).toEqual({ recipientCount: 3, totalPrice: 60 })
  })

  it('makes one recipient of siblings when the content does not name them', async () => {
    const { owner: sender } = await academy(app.current)
    const response = await send(app.current, sender, {
      recipients: [
        { phone: '010-1234-5678', name: 'Kim' },
        { phone: '010-1234-5678', name: 'Lee' },
      ],
      title: 'T',
      content: 'No class on Monday',
    })
    expect(response.json()).toMatchObject({ recipientCount: 1, recipients: [expect.objectContaining({ name: 'Kim' })] })
  })
})
