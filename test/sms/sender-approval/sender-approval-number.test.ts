import { describe, expect, it } from 'vitest'
import { formatHyphenated } from '../../../lib/sms/phone.js'
import { owner } from '../../support/fixtures.js'
import { itConcurrent, useTestApp } from '../../support/helper.js'
import { createPendingSenderTenant, uniqueSenderNumber } from '../sender-approval-fixtures.js'
import { expectProblem, seedSenderSetting, senderRow, signedApproval, TEST_HMAC_SECRET, type SignedCall } from '../sms-fixtures.js'
import { academy } from '../../support/staff-fixtures.js'

// All tenants send through one provider account, so an approval is a statement about one number: the one the
// operator reviewed, and one that no other tenant already sends from.
describe('PATCH /internal/sms/sender-settings/{tenantSlug}/approval: the number approved', () => {
  const app = useTestApp({ env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })
  const call = (signed: SignedCall) => app.current.inject(signedApproval(signed))

  /** The tenant's PENDING number, as its owner's PUT would leave it. */
  const setNumber = (tenant: { id: number }, senderNumber: string) =>
    owner().updateTable('smsSenderSettings').set({ senderNumber }).where('tenantId', '=', tenant.id).execute()

  /** A tenant whose number is APPROVED, as a victim whose number another tenant wants to send from. */
  async function approvedTenant() {
    const tenant = await createPendingSenderTenant()
    expect((await call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED' } })).statusCode).toBe(200)
    return tenant
  }

  it("refuses the approval of a listed number the tenant has since replaced by another tenant's APPROVED one: SENDER_NUMBER_CHANGED, nothing changes", async () => {
    const victim = await approvedTenant()
    const { tenant: attacker, owner } = await academy(app.current)
    const listed = uniqueSenderNumber()
    await seedSenderSetting(attacker, { senderNumber: listed, registrationStatus: 'PENDING' })
    // After the operator listed the pending numbers, the attacker's owner switches to the victim's number.
    const switched = await app.current.inject({
      method: 'PUT',
      url: '/v1/sms/sender-setting',
      headers: owner.headers,
      payload: { senderNumber: formatHyphenated(victim.senderNumber) },
    })
    expect(switched.json()).toMatchObject({ registrationStatus: 'PENDING' })
    const before = await senderRow(attacker)

    expectProblem(await call({ slug: attacker.slug, body: { registrationStatus: 'APPROVED', senderNumber: listed } }), 409, 'SENDER_NUMBER_CHANGED')
    expect(await senderRow(attacker)).toEqual(before)
    expect(before).toMatchObject({ senderNumber: victim.senderNumber, registrationStatus: 'PENDING', approvedAt: null })
  })

  it('refuses a REJECTED decision about a number the tenant no longer has, too', async () => {
    const tenant = await createPendingSenderTenant()
    const body = { registrationStatus: 'REJECTED', rejectionReason: 'not the academy’s', senderNumber: uniqueSenderNumber() }
    expectProblem(await call({ slug: tenant.slug, body }), 409, 'SENDER_NUMBER_CHANGED')
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', version: 0, rejectionReason: null })
  })

  it.each([
    ['with the number reviewed', true],
    ['without a reviewed number', false],
  ])("refuses to approve a number APPROVED for another tenant (%s): SENDER_NUMBER_IN_USE, nothing changes", async (_case, withNumber) => {
    const victim = await approvedTenant()
    const attacker = await createPendingSenderTenant()
    await setNumber(attacker, victim.senderNumber)
    const body = { registrationStatus: 'APPROVED', ...(withNumber ? { senderNumber: formatHyphenated(victim.senderNumber) } : {}) }
    expectProblem(await call({ slug: attacker.slug, body }), 409, 'SENDER_NUMBER_IN_USE')
    expect(await senderRow(attacker)).toMatchObject({ senderNumber: victim.senderNumber, registrationStatus: 'PENDING', approvedAt: null, version: 0 })
    expect(await senderRow(victim)).toMatchObject({ registrationStatus: 'APPROVED', version: 1 })
  })

  it('still records a rejection of a number APPROVED for another tenant', async () => {
    const victim = await approvedTenant()
    const attacker = await createPendingSenderTenant()
    await setNumber(attacker, victim.senderNumber)
    const body = { registrationStatus: 'REJECTED', rejectionReason: 'another academy’s number', senderNumber: victim.senderNumber }
    expect((await call({ slug: attacker.slug, body })).json()).toMatchObject({ registrationStatus: 'REJECTED' })
  })

  it('approves when the reviewed number is the current one, however it is written', async () => {
    const tenant = await createPendingSenderTenant()
    const response = await call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED', senderNumber: formatHyphenated(tenant.senderNumber) } })
    expect(response.statusCode).toBe(200)
    expect(await senderRow(tenant)).toMatchObject({ senderNumber: tenant.senderNumber, registrationStatus: 'APPROVED', version: 1 })
  })

  it('answers SENDER_NUMBER_CHANGED to a reviewed number that is not a phone number', async () => {
    const tenant = await createPendingSenderTenant()
    expectProblem(await call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED', senderNumber: 'the usual one' } }), 409, 'SENDER_NUMBER_CHANGED')
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  itConcurrent('approves one number for one tenant only when two approvals of it run at the same moment', async () => {
    const number = uniqueSenderNumber()
    const [first, second] = [await createPendingSenderTenant(), await createPendingSenderTenant()]
    await setNumber(first, number)
    await setNumber(second, number)
    const answers = await Promise.all(
      [first, second].map((tenant) => call({ slug: tenant.slug, body: { registrationStatus: 'APPROVED', senderNumber: number } })),
    )
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409])
    expect(answers.find((answer) => answer.statusCode === 409)!.json().code).toBe('SENDER_NUMBER_IN_USE')
    const rows = await Promise.all([first, second].map((tenant) => senderRow(tenant)))
    expect(rows.filter((row) => row!.registrationStatus === 'APPROVED')).toHaveLength(1)
  })
})
