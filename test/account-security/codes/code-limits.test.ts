import { describe, expect, it } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import { mfaCall, mfaCookieOf, passwordStep, sendLoginCode } from '../second-factor/mfa-bed.js'
import { bearerFor, createAcademy, insertMember, sentTo, uniquePhone, useRecoveryBed, type Academy, type Member } from '../recovery-bed.js'

// The limits on one-time codes, attacked: an academy of one's own must not use up another's codes or tell whether a
// number has an account elsewhere, and self-registered students must not spend their academy's SMS without bound.
const LIMIT = 3
const TENANT_VERIFICATIONS = 5
const ADDRESS_BUDGET = 20
const bed = useRecoveryBed({
  SVC_OTP_DAILY_LIMIT: String(LIMIT),
  SVC_OTP_TENANT_DAILY_VERIFICATIONS: String(TENANT_VERIFICATIONS),
  SVC_LOGIN_IP_PER_MINUTE: String(ADDRESS_BUDGET),
})

/** A different client address for each test, so the address budget one test spends is not another's. */
let addresses = 0
const nextAddress = () => `10.61.${Math.floor(++addresses / 200)}.${addresses % 200}`

const askVerification = (headers: Record<string, string>, remoteAddress: string) =>
  bed.app.inject({ method: 'POST', url: '/v1/me/phone/verification', headers, remoteAddress })

/** A student of `tenant` with `phone`, unverified (as public registration leaves one), signed in. */
async function student(tenant: Academy, phone: string) {
  const member = await insertMember(bed.owner, tenant, { phone, verified: false })
  return { member, headers: await bearerFor(bed.app, member, tenant) }
}

const forgot = (tenant: Academy, member: Member) =>
  bed.app.inject({ method: 'POST', url: '/v1/password/forgot', payload: { userLoginId: member.userLoginId, customId: tenant.customId } })

describe('codes that verify a number (POST /v1/me/phone/verification)', () => {
  it("cannot use up a victim's codes from an academy of the attacker's own", async () => {
    const phone = uniquePhone()
    const victimAcademy = await createAcademy(bed.owner)
    const victim = await insertMember(bed.owner, victimAcademy, { phone, role: 'MANAGER' })
    const attacker = await createAcademy(bed.owner)
    const address = nextAddress()
    const answers: number[] = []
    for (let i = 0; i < 10; i++) answers.push((await askVerification((await student(attacker, phone)).headers, address)).statusCode)
    // The attacker's own academy stops at the per-number limit; nothing of it counts for the victim.
    expect(answers).toEqual([202, 202, 202, 429, 429, 429, 429, 429, 429, 429])

    // The victim's recovery code still goes out, and so does the SMS second factor.
    expect((await forgot(victimAcademy, victim)).statusCode).toBe(202)
    const texts = async () => (await sentTo(bed, phone)).map((message) => message.text)
    expect(await texts()).toContainEqual(expect.stringContaining('비밀번호 재설정 인증번호'))
    const bearer = await bearerFor(bed.app, victim, victimAcademy, 'MANAGER')
    expect((await mfaCall(bed.app, bearer, '/sms', { password: victim.password })).statusCode).toBe(204)
    const cookie = mfaCookieOf(await passwordStep(bed.app, victim, victimAcademy))
    expect((await sendLoginCode(bed.app, cookie)).statusCode).toBe(202)
    expect(await texts()).toContainEqual(expect.stringContaining('로그인 인증번호'))
  })

  it('answers alike whether or not the number has an account, and used codes, in another academy', async () => {
    const known = uniquePhone()
    const elsewhere = await createAcademy(bed.owner)
    const holder = await insertMember(bed.owner, elsewhere, { phone: known })
    for (let i = 0; i < LIMIT; i++) {
      await forgot(elsewhere, holder)
      await bed.app.passwordRecovery.settled()
      await bed.owner.updateTable('oneTimeCodes').set({ resendAfter: new Date(0) }).where('userId', '=', holder.id).execute()
    }
    expect(await sentTo(bed, known)).toHaveLength(LIMIT)

    const probe = await createAcademy(bed.owner)
    const address = nextAddress()
    const onKnown = await askVerification((await student(probe, known)).headers, address)
    const onFresh = await askVerification((await student(probe, uniquePhone())).headers, address)
    expect({ status: onKnown.statusCode, body: onKnown.body }).toEqual({ status: onFresh.statusCode, body: onFresh.body })
    expect(onKnown.statusCode).toBe(202)
  })

  it(`stops an academy's students at SVC_OTP_TENANT_DAILY_VERIFICATIONS (${TENANT_VERIFICATIONS}) a day, sparing its quota`, async () => {
    const academy = await createAcademy(bed.owner)
    await bed.owner.updateTable('tenants').set({ dailyRecipientQuota: 12 }).where('id', '=', academy.id).execute()
    const answers = []
    for (let i = 0; i < 13; i++) answers.push(await askVerification((await student(academy, uniquePhone())).headers, nextAddress()))
    expect(answers.map((answer) => answer.statusCode)).toEqual([...Array(TENANT_VERIFICATIONS).fill(202), ...Array(13 - TENANT_VERIFICATIONS).fill(429)])
    expectProblem(answers.at(-1)!, 429, 'OTP_RATE_LIMITED')
    expect(answers.at(-1)!.json().detail).toBe('Too many phone verifications today in this academy.')
    const spent = await bed.owner.selectFrom('smsDailyUsage').select('recipients').where('tenantId', '=', academy.id).execute()
    expect(spent).toEqual([{ recipients: TENANT_VERIFICATIONS }])
    // Another academy is not held back by this one's total.
    const other = await createAcademy(bed.owner)
    expect((await askVerification((await student(other, uniquePhone())).headers, nextAddress())).statusCode).toBe(202)
  })

  it('spends the per-address budget: beyond it, RATE_LIMITED before any code is considered', async () => {
    const academy = await createAcademy(bed.owner)
    const { headers } = await student(academy, uniquePhone())
    const address = nextAddress()
    const codes = []
    for (let i = 0; i < ADDRESS_BUDGET; i++) codes.push((await askVerification(headers, address)).json().code ?? 'sent')
    // The first is sent, the rest refused by the resend interval: each still spent the address's budget.
    expect(codes).toEqual(['sent', ...Array(ADDRESS_BUDGET - 1).fill('OTP_RATE_LIMITED')])
    expectProblem(await askVerification(headers, address), 429, 'RATE_LIMITED')
    // Confirming spends it too (a password proof is a login attempt).
    const confirm = await bed.app.inject({
      method: 'POST',
      url: '/v1/me/phone/verification/confirm',
      headers,
      remoteAddress: address,
      payload: { code: '000000', password: 'Not-The-Password-1' },
    })
    expectProblem(confirm, 429, 'RATE_LIMITED')
  })
})
