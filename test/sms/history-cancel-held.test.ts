import { describe, expect, it } from 'vitest'
import { cancelScheduledMessage } from '../../db/repos/sms/sms-messages.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { owner as ownerDb } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { uniqueSenderNumber } from './sender-approval-fixtures.js'
import { insertMessageRow, problem, recipientRows, setSender } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'

// A message the dispatcher holds (its tenant is not ACTIVE, or its stored sender number is not the tenant's
// APPROVED one) never goes out until that changes; its sender can take it back, whatever its scheduled time.
describe('POST /v1/sms/history/{id}/cancel of a message the dispatcher holds', () => {
  const app = useTestApp()
  const cancel = (who: Actor, id: number) =>
    app.current.inject({ method: 'POST', url: `/v1/sms/history/${id}/cancel`, headers: who.headers })
  const statusOf = async (id: number) =>
    (await ownerDb().selectFrom('smsMessages').select(['status', 'cancelledAt']).where('id', '=', id).executeTakeFirstOrThrow()).status

  /**
   * A live-provider message stored with `senderNumber`, as a send leaves it; `approved` is the tenant's APPROVED
   * number now. Not due for a year, so no dispatcher of another file could move it (the rule does not look at it).
   */
  async function liveMessage(sender: Actor, senderNumber: string, fixture: Parameters<typeof insertMessageRow>[1] = {}) {
    const id = await insertMessageRow(sender, { scheduledAt: null, ...fixture })
    await ownerDb()
      .updateTable('smsMessages')
      .set({ provider: 'extsms', senderNumber, nextAttemptAt: new Date(Date.now() + 365 * 86_400_000) })
      .where('id', '=', id)
      .execute()
    return id
  }

  /** An academy whose number X was REJECTED, then replaced by Y, which the operator APPROVED. */
  async function academyWithReplacedNumber() {
    const staff = await academy(app.current)
    const [rejected, approved] = [uniqueSenderNumber(), uniqueSenderNumber()]
    await setSender(staff.tenant, 'APPROVED', approved)
    return { ...staff, rejected, approved }
  }

  it('cancels an immediate message stored with a number since REJECTED and replaced: 200, CANCELLED, recipients CANCELLED', async () => {
    const { tenant, instructor, rejected } = await academyWithReplacedNumber()
    const id = await liveMessage(instructor, rejected)
    const response = await cancel(instructor, id)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ id, status: 'CANCELLED', cancelledAt: expect.any(String) })
    expect(await statusOf(id)).toBe('CANCELLED')
    expect((await recipientRows(tenant, id)).map((row) => row.deliveryStatus)).toEqual(['CANCELLED'])
  })

  it('cancels a held message whose scheduled time has passed', async () => {
    const { instructor, rejected } = await academyWithReplacedNumber()
    const id = await liveMessage(instructor, rejected, { scheduledAt: new Date(Date.now() + 3_600_000) })
    await ownerDb().updateTable('smsMessages').set({ scheduledAt: new Date(Date.now() - 60_000) }).where('id', '=', id).execute()
    expect((await cancel(instructor, id)).statusCode).toBe(200)
    expect(await statusOf(id)).toBe('CANCELLED')
  })

  it("cancels a held immediate message of a suspended tenant (the repository's rule; its staff cannot sign in meanwhile)", async () => {
    const { tenant, instructor, approved } = await academyWithReplacedNumber()
    const id = await liveMessage(instructor, approved)
    await ownerDb().updateTable('tenants').set({ status: 'SUSPENDED' }).where('id', '=', tenant.id).execute()
    const cancelled = await withTenant(app.current.db, tenant.id, (trx) => cancelScheduledMessage(trx, id, {}))
    expect(cancelled).toMatchObject({ id, status: 'CANCELLED' })
    expect(await statusOf(id)).toBe('CANCELLED')
  })

  it('answers SMS_NOT_CANCELLABLE for an immediate message stored with the APPROVED number (not held)', async () => {
    const { instructor, approved } = await academyWithReplacedNumber()
    const id = await liveMessage(instructor, approved)
    expect(problem(await cancel(instructor, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
    expect(await statusOf(id)).toBe('PENDING')
  })

  it('answers SMS_NOT_CANCELLABLE for a held message handed to the provider, or tried before it was held', async () => {
    const { instructor, rejected } = await academyWithReplacedNumber()
    const handed = await liveMessage(instructor, rejected, { claimedUntil: new Date(Date.now() + 60_000) })
    await ownerDb().updateTable('smsMessages').set({ handedOverAt: new Date(), dispatchAttempts: 1 }).where('id', '=', handed).execute()
    const tried = await liveMessage(instructor, rejected)
    await ownerDb().updateTable('smsMessages').set({ dispatchAttempts: 1 }).where('id', '=', tried).execute()
    for (const id of [handed, tried]) {
      expect(problem(await cancel(instructor, id))).toEqual({ status: 409, code: 'SMS_NOT_CANCELLABLE' })
      expect(await statusOf(id)).toBe('PENDING')
    }
  })
})
