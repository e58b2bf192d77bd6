import { describe, expect, it } from 'vitest'
import { claimDueMessages } from '../../db/repos/dispatch/dispatch.js'
import type { RegistrationStatus, TenantStatus } from '../../db/schema.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { useDispatchTestBed } from './dispatch-test-bed.js'

// SMS not yet handed to the provider are not dispatched while the tenant is not
// ACTIVE or (live provider) its sender is not APPROVED; they stay PENDING and go out once it is again.
describe('dispatch of a suspended tenant or an unapproved sender', () => {
  const bed = useDispatchTestBed(4)
  const { dispatcher, sentFor } = bed
  const setTenant = (tenantId: number, status: TenantStatus) =>
    bed.iso.owner.updateTable('tenants').set({ status }).where('id', '=', tenantId).execute()
  const setSender = (tenantId: number, registrationStatus: RegistrationStatus) =>
    bed.iso.owner.updateTable('smsSenderSettings').set({ registrationStatus }).where('tenantId', '=', tenantId).execute()

  it('keeps the messages of a SUSPENDED tenant PENDING, unclaimed and uncounted, and sends them once it is ACTIVE', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    await setTenant(tenant.tenantId, 'SUSPENDED')
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toHaveLength(0)
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })

    await setTenant(tenant.tenantId, 'ACTIVE')
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toHaveLength(2)
    expect((await messageState(bed.iso.owner, smsId)).status).toBe('DISPATCHED')
  })

  it('holds live-provider messages while the sender is PENDING or REJECTED, and sends them once APPROVED', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    for (const status of ['REJECTED', 'PENDING'] as const) {
      await setSender(tenant.tenantId, status)
      await dispatcher().runOnce()
      expect(sentFor(smsId)).toHaveLength(0)
      expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0 })
    }
    await setSender(tenant.tenantId, 'APPROVED')
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toHaveLength(2)
  })

  it('skips held messages in the claim instead of claiming them, so other tenants are not starved', async () => {
    const held = await insertTenantAndSender(bed.iso.owner)
    const heldIds = []
    for (let i = 0; i < 3; i++) {
      heldIds.push(await insertPendingMessage(bed.iso.owner, { ...held, nextAttemptAt: new Date(Date.now() - 60_000) }))
    }
    await setTenant(held.tenantId, 'CLOSED')
    const active = await insertTenantAndSender(bed.iso.owner)
    const activeId = await insertPendingMessage(bed.iso.owner, active)

    const claims = await claimDueMessages(bed.database.db, 1, 30)
    expect(claims.map((claim) => claim.smsId)).toEqual([activeId])
    for (const smsId of heldIds) expect((await messageState(bed.iso.owner, smsId)).claimToken).toBeNull()
  })

  it('does not hand over a message whose tenant was suspended after the claim, and gives the claim back', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, { ...tenant, nextAttemptAt: new Date(Date.now() - 3_600_000) })
    const [claim] = await claimDueMessages(bed.database.db, 1, 30)
    expect(claim?.smsId).toBe(smsId)
    await setTenant(tenant.tenantId, 'SUSPENDED')
    await dispatcher().processClaim(claim!)
    expect(sentFor(smsId)).toHaveLength(0)
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
  })
})
