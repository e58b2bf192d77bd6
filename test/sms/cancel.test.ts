import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { owner as ownerDb } from '../support/fixtures.js'
import { itConcurrent, useTestApp } from '../support/helper.js'
import {
  backdateSchedule,
  insertMessageRow,
  minutesFromNow,
  problem,
  recipientRows,
  send,
} from '../support/sms-send-fixtures.js'
import { academy, actor, type Actor } from '../support/staff-fixtures.js'

const inAnHour = () => new Date(Date.now() + 3_600_000)

describe('POST /v1/sms/history/{id}/cancel', () => {
  const app = useTestApp()
  const cancel = (who: Actor | undefined, id: number | string) =>
    app.current.inject({ method: 'POST', url: `/v1/sms/history/${id}/cancel`, headers: who?.headers ?? {} })
  const statusOf = async (tenantId: number, id: number) =>
    (await ownerDb().selectFrom('smsMessages').select(['status', 'cancelledAt']).where('tenantId', '=', tenantId).where('id', '=', id).executeTakeFirstOrThrow())

  it('cancels a scheduled message sent through the API: 200, CANCELLED, cancelledAt, recipients CANCELLED', async () => {
    const { tenant, instructor } = await academy(app.current)
    const sent = await send(app.current, instructor, {
      recipients: [{ phone: '010-1234-5678' }, { phone: '010-8765-4321' }],
      title: 'Later',
      content: 'See you {name}',
      scheduledAt: minutesFromNow(60),
    })
    const response = await cancel(instructor, sent.json().id)
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body).toMatchObject({ id: sent.json().id, status: 'CANCELLED', cancelledAt: expect.any(String), content: 'See you {name}' })
    expect(body.recipients).toEqual([
      expect.objectContaining({ phone: '010-****-5678', deliveryStatus: 'CANCELLED' }),
      expect.objectContaining({ phone: '010-****-4321', deliveryStatus: 'CANCELLED' }),
    ])
    expect((await recipientRows(tenant, body.id)).map((row) => row.deliveryStatus)).toEqual(['CANCELLED', 'CANCELLED'])
    expect((await statusOf(tenant.id, body.id)).status).toBe('CANCELLED')
  })

  it.each(['OWNER', 'MANAGER'] as const)('lets %s cancel another staff member’s message', async (role) => {
    const { tenant, instructor } = await academy(app.current)
    const boss = await actor(app.current, tenant, role)
    const id = await insertMessageRow(instructor, { scheduledAt: inAnHour() })
    const response = await cancel(boss, id)
    expect(response.statusCode).toBe(200)
    expect(response.json().status).toBe('CANCELLED')
  })

  it('answers SMS_NOT_FOUND to an INSTRUCTOR cancelling someone else’s message, and leaves it alone', async () => {
    const { tenant, owner, instructor } = await academy(app.current)
    const colleague = await actor(app.current, tenant, 'INSTRUCTOR')
    for (const sender of [owner, colleague]) {
      const id = await insertMessageRow(sender, { scheduledAt: inAnHour() })
      expect(problem(await cancel(instructor, id))).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
      expect((await statusOf(tenant.id, id)).status).toBe('PENDING')
    }
  })

  it('answers SMS_NOT_CANCELLABLE for an immediate message', async () => {
    const { tenant, owner } = await academy(app.current)
    const id = await insertMessageRow(owner, { scheduledAt: null })
    expect(problem(await cancel(owner, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
    expect((await statusOf(tenant.id, id)).status).toBe('PENDING')
  })

  it('answers SMS_NOT_CANCELLABLE once the scheduled time has come', async () => {
    const { tenant, owner } = await academy(app.current)
    const id = await insertMessageRow(owner, { scheduledAt: inAnHour() })
    await backdateSchedule(tenant, id)
    expect(problem(await cancel(owner, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
  })

  it.each(['DISPATCHED', 'SENT', 'FAILED', 'PARTIAL', 'CANCELLED'] as const)(
    'answers SMS_NOT_CANCELLABLE for a %s message',
    async (status) => {
      const { tenant, owner } = await academy(app.current)
      const id = await insertMessageRow(owner, { scheduledAt: inAnHour(), status })
      expect(problem(await cancel(owner, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
      expect((await statusOf(tenant.id, id)).status).toBe(status)
    },
  )

  it('answers SMS_NOT_CANCELLABLE while the dispatcher holds a claim, but cancels after the lease ran out', async () => {
    const { owner } = await academy(app.current)
    const claimed = await insertMessageRow(owner, { scheduledAt: inAnHour(), claimedUntil: new Date(Date.now() + 60_000) })
    expect(problem(await cancel(owner, claimed))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
    const lapsed = await insertMessageRow(owner, { scheduledAt: inAnHour(), claimedUntil: new Date(Date.now() - 60_000) })
    expect((await cancel(owner, lapsed)).statusCode).toBe(200)
  })

  itConcurrent('does not race a dispatcher claiming the row at the same moment: it waits and then refuses', async () => {
    const { tenant, owner } = await academy(app.current)
    const id = await insertMessageRow(owner, { scheduledAt: inAnHour() })
    let cancelling: ReturnType<typeof cancel> | undefined
    await ownerDb().transaction().execute(async (trx) => {
      // What svc_claim_due_sms does to a row: lock it, then stamp a lease, committed a moment later.
      await sql`select id from sms_messages where tenant_id = ${tenant.id} and id = ${id} for update`.execute(trx)
      await sql`update sms_messages set claim_token = gen_random_uuid(), claimed_until = now() + interval '2 minutes'
                where tenant_id = ${tenant.id} and id = ${id}`.execute(trx)
      cancelling = cancel(owner, id)
      await new Promise((resolve) => setTimeout(resolve, 200))
    })
    expect(problem(await cancelling!)).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
    expect((await statusOf(tenant.id, id)).status).toBe('PENDING')
    expect((await recipientRows(tenant, id)).map((row) => row.deliveryStatus)).toEqual(['PENDING'])
  })

  it('answers SMS_NOT_FOUND for another tenant’s message and an unknown id', async () => {
    const first = await academy(app.current)
    const second = await academy(app.current)
    const foreign = await insertMessageRow(first.owner, { scheduledAt: inAnHour() })
    expect(problem(await cancel(second.owner, foreign))).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
    expect((await statusOf(first.tenant.id, foreign)).status).toBe('PENDING')
    expect(problem(await cancel(second.owner, 987_654_321))).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
  })

  it('answers VALIDATION_FAILED for a bad id, AUTH_002 and AUTH_008', async () => {
    const { owner, student } = await academy(app.current)
    const id = await insertMessageRow(owner, { scheduledAt: inAnHour() })
    expect(problem(await cancel(owner, 'abc'))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
    expect(problem(await cancel(undefined, id))).toEqual({ status: 401, code: 'AUTH_002' })
    expect(problem(await cancel(student, id))).toEqual({ status: 403, code: 'AUTH_008' })
  })

  it('cancels once: a second cancel answers SMS_NOT_CANCELLABLE', async () => {
    const { owner } = await academy(app.current)
    const id = await insertMessageRow(owner, { scheduledAt: inAnHour() })
    expect((await cancel(owner, id)).statusCode).toBe(200)
    expect(problem(await cancel(owner, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
  })
})
