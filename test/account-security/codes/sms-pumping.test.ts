import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import { bearerFor, createAcademy, insertMember, sentTo, uniquePhone, useRecoveryBed, type Academy, type Member } from '../recovery-bed.js'

const LIMIT = 3
const bed = useRecoveryBed({ SVC_OTP_DAILY_LIMIT: String(LIMIT) })

const forgot = (tenant: Academy, member: Member) =>
  bed.app.inject({ method: 'POST', url: '/v1/password/forgot', payload: { userLoginId: member.userLoginId, customId: tenant.customId } })

/** Lets the answered requests finish, then every resend interval end at once, as time passing would. */
async function resendNow() {
  await bed.app.passwordRecovery.settled()
  await sql`update one_time_codes set resend_after = now() - interval '1 second'`.execute(bed.owner)
}

describe('one phone number behind many accounts of many academies (SMS pumping)', () => {
  it(`receives at most SVC_OTP_DAILY_LIMIT (${LIMIT}) codes a day, whichever account or academy asks`, async () => {
    const phone = uniquePhone()
    const first = await createAcademy(bed.owner)
    const second = await createAcademy(bed.owner)
    const accounts: Array<[Academy, Member]> = [
      [first, await insertMember(bed.owner, first, { phone })],
      [first, await insertMember(bed.owner, first, { phone })],
      [second, await insertMember(bed.owner, second, { phone })],
      [second, await insertMember(bed.owner, second, { phone })],
    ]
    // Every account asks twice (each account's own limit is not what stops them), all answered alike.
    for (let round = 0; round < 2; round++) {
      for (const [tenant, member] of accounts) {
        const answer = await forgot(tenant, member)
        expect({ status: answer.statusCode, body: answer.body }).toEqual({ status: 202, body: '{"expiresIn":300}' })
      }
      await resendNow()
    }
    expect(await sentTo(bed, phone)).toHaveLength(LIMIT)

    // A signed-in user of a third academy proving that number is not held back by codes other academies sent to it:
    // the answer must not tell whether the number has an account elsewhere, and nobody may block another's codes.
    const third = await createAcademy(bed.owner)
    const newcomer = await insertMember(bed.owner, third, { phone, verified: false })
    expect((await bed.app.inject({ method: 'POST', url: '/v1/me/phone/verification', headers: await bearerFor(bed.app, newcomer, third) })).statusCode).toBe(202)
    expect(await sentTo(bed, phone)).toHaveLength(LIMIT + 1)

    // Another number is not held back by this one.
    const other = await insertMember(bed.owner, first)
    expect((await forgot(first, other)).statusCode).toBe(202)
    expect(await sentTo(bed, other.phone!)).toHaveLength(1)
  })

  it('counts numbers under a key that names no number', async () => {
    const phone = uniquePhone()
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant, { phone })
    const before = await bed.owner.selectFrom('oneTimeCodePhoneDays').select('phoneKey').execute()
    expect((await forgot(tenant, member)).statusCode).toBe(202)
    await bed.app.passwordRecovery.settled()
    const added = (await bed.owner.selectFrom('oneTimeCodePhoneDays').selectAll().execute()).filter(
      (row) => !before.some((old) => old.phoneKey === row.phoneKey),
    )
    expect(added).toHaveLength(1)
    expect(added[0]).toMatchObject({ codes: 1, phoneKey: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(added[0]!.phoneKey).not.toContain(phone)
    expect(added[0]!.phoneKey).not.toContain(phone.slice(3))
  })
})
