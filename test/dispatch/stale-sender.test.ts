import { describe, expect, it } from 'vitest'
import { claimDueMessages } from '../../db/repos/dispatch/dispatch.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { useDispatchTestBed } from './dispatch-test-bed.js'

// The number a message was stored with is the one it would go out from. Every tenant sends through one provider
// account, so once that number is rejected or replaced the message is held (PENDING, not handed to the provider),
// whatever the tenant's current number is.
describe('dispatch of a message whose sender number is no longer the approved one', () => {
  const bed = useDispatchTestBed(4)
  const { dispatcher, sentFor } = bed
  const OLD = '0212345678'
  const NEW = '0312345678'
  const SYSTEM_SENDER = '15881234'

  /** The operator rejects the number the tenant had, the owner enters another, and the operator approves that. */
  const replaceApprovedNumber = (tenantId: number) =>
    bed.iso.owner
      .updateTable('smsSenderSettings')
      .set({ senderNumber: NEW, registrationStatus: 'APPROVED', approvedAt: new Date() })
      .where('tenantId', '=', tenantId)
      .execute()
  const storeWith = (smsId: number, values: { senderNumber?: string; kind?: 'VERIFICATION_CODE' }) =>
    bed.iso.owner
      .updateTable('smsMessages')
      .set({ ...values, ...(values.kind ? { senderId: null } : {}) })
      .where('id', '=', smsId)
      .execute()

  it('holds a message stored with a number since REJECTED and replaced by a new APPROVED one, and sends one stored with the new', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const stale = await insertPendingMessage(bed.iso.owner, tenant)
    await bed.iso.owner.updateTable('smsSenderSettings').set({ registrationStatus: 'REJECTED' }).where('tenantId', '=', tenant.tenantId).execute()
    await replaceApprovedNumber(tenant.tenantId)
    const current = await insertPendingMessage(bed.iso.owner, tenant)
    await storeWith(current, { senderNumber: NEW })

    await dispatcher().runOnce()

    expect(sentFor(stale)).toHaveLength(0)
    expect(await messageState(bed.iso.owner, stale)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
    expect(sentFor(current).map((message) => message.from)).toEqual([NEW, NEW])
    expect(bed.fake.sentMessages.filter((message) => message.from === OLD && message.customFields.svcSmsId === String(stale))).toEqual([])
  })

  it('does not hand over a message claimed before its number was replaced, and gives the claim back', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, { ...tenant, nextAttemptAt: new Date(Date.now() - 3_600_000) })
    const [claim] = (await claimDueMessages(bed.database.db, 100, 30)).filter((entry) => entry.smsId === smsId)
    expect(claim?.smsId).toBe(smsId)
    await replaceApprovedNumber(tenant.tenantId)

    await dispatcher().processClaim(claim!)

    expect(sentFor(smsId)).toHaveLength(0)
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
  })

  it("holds a system message stored with the tenant's former number, but not one from the system sender", async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const recipients = [{ phone: '01022223333' }]
    const former = await insertPendingMessage(bed.iso.owner, { ...tenant, recipients, content: 'code 1' })
    await storeWith(former, { kind: 'VERIFICATION_CODE' })
    const fromSystem = await insertPendingMessage(bed.iso.owner, { ...tenant, recipients, content: 'code 2' })
    await storeWith(fromSystem, { kind: 'VERIFICATION_CODE', senderNumber: SYSTEM_SENDER })
    await replaceApprovedNumber(tenant.tenantId)

    await dispatcher({ systemSender: SYSTEM_SENDER }).runOnce()

    expect(sentFor(former)).toHaveLength(0)
    expect(await messageState(bed.iso.owner, former)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0 })
    expect(sentFor(fromSystem).map((message) => message.from)).toEqual([SYSTEM_SENDER])
  })

  it('holds a staff message stored with the number of another tenant, though its own tenant is APPROVED', async () => {
    const victim = await insertTenantAndSender(bed.iso.owner)
    await replaceApprovedNumber(victim.tenantId)
    const attacker = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, attacker)
    await storeWith(smsId, { senderNumber: NEW })

    await dispatcher().runOnce()

    expect(sentFor(smsId)).toHaveLength(0)
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0 })
  })
})
