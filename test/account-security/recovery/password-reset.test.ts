import type { LightMyRequestResponse } from 'fastify'
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { expectProblem, login, refresh, strongPassword, uniqueAddress } from '../../support/auth-fixtures.js'
import { itConcurrent } from '../../support/helper.js'
import { codeSentTo, createAcademy, insertMember, otherCode, storedCode, useRecoveryBed, type Academy, type Member } from '../recovery-bed.js'

const bed = useRecoveryBed()

type Extras = { headers?: Record<string, string>; remoteAddress?: string }

const forgot = (tenant: Academy, member: Member) =>
  bed.app.inject({ method: 'POST', url: '/v1/password/forgot', payload: { userLoginId: member.userLoginId, customId: tenant.customId } })
const reset = (payload: object, extras: Extras = {}) => bed.app.inject({ method: 'POST', url: '/v1/password/reset', payload, ...extras })
const resetAs = (tenant: Academy, member: Member, code: string, newPassword = strongPassword(), extras: Extras = {}) =>
  reset({ userLoginId: member.userLoginId, customId: tenant.customId, code, newPassword }, extras)
const signIn = (tenant: Academy, member: Member, password: string, device = 'WEB') =>
  login(bed.app, { userLoginId: member.userLoginId, password, customId: tenant.customId }, { headers: { 'x-device-category': device }, remoteAddress: uniqueAddress() })

/** A member of a fresh academy who asked for a reset code, and the code the phone received. */
async function memberWithCode() {
  const tenant = await createAcademy(bed.owner)
  const member = await insertMember(bed.owner, tenant)
  expect((await forgot(tenant, member)).statusCode).toBe(202)
  return { tenant, member, code: await codeSentTo(bed, member.phone!) }
}

const passwordHashOf = async (userId: number) =>
  (await bed.owner.selectFrom('users').select('passwordHash').where('id', '=', userId).executeTakeFirstOrThrow()).passwordHash

function visible(response: LightMyRequestResponse) {
  const { requestId: _id, ...problem } = response.json()
  return { status: response.statusCode, problem }
}

describe('POST /v1/password/reset', () => {
  it('sets the password, ends every session, clears the lockout count, uses the code up and records PASSWORD_RESET', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const web = await signIn(tenant, member, member.password, 'WEB')
    const mobile = await signIn(tenant, member, member.password, 'MOBILE')
    expect([web.response.statusCode, mobile.response.statusCode]).toEqual([200, 200])
    for (let failure = 0; failure < 2; failure++) expectProblem((await signIn(tenant, member, 'Wrong-Password-1')).response, 401, 'AUTH_001')
    const failures = () => bed.owner.selectFrom('userLoginFailures').select('failures').where('userId', '=', member.id).executeTakeFirst()
    expect(await failures()).toEqual({ failures: 2 })

    expect((await forgot(tenant, member)).statusCode).toBe(202)
    const code = await codeSentTo(bed, member.phone!)
    const newPassword = strongPassword()
    const response = await resetAs(tenant, member, code, newPassword, { headers: { 'x-request-id': 'req-abc' }, remoteAddress: '10.1.2.3' })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')

    expectProblem((await refresh(bed.app, web.refreshToken, { remoteAddress: uniqueAddress() })).response, 401, 'AUTH_007')
    expectProblem((await refresh(bed.app, mobile.refreshToken, { remoteAddress: uniqueAddress() })).response, 401, 'AUTH_007')
    expectProblem(await bed.app.inject({ method: 'GET', url: '/v1/me', headers: web.bearer }), 401, 'AUTH_004')
    expectProblem(await bed.app.inject({ method: 'GET', url: '/v1/me', headers: mobile.bearer }), 401, 'AUTH_004')
    const reasons = await bed.owner.selectFrom('sessionRevocations').select('reason').where('tenantId', '=', tenant.id).execute()
    expect(reasons).toEqual([{ reason: 'PASSWORD_RESET' }, { reason: 'PASSWORD_RESET' }])
    expect(await failures()).toBeUndefined()
    expect(await storedCode(bed.owner, member.id, 'PASSWORD_RESET')).toBeUndefined()

    expectProblem((await signIn(tenant, member, member.password)).response, 401, 'AUTH_001')
    expect((await signIn(tenant, member, newPassword)).response.statusCode).toBe(200)

    const events = await bed.owner.selectFrom('auditEvents').selectAll().where('tenantId', '=', tenant.id).where('type', '=', 'PASSWORD_RESET').execute()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      actorId: null,
      targetType: 'USER',
      targetId: String(member.id),
      requestId: 'req-abc',
      ipAddress: '10.1.2.3',
      details: { endedSessions: 2 },
    })
    const details = JSON.stringify(events[0]!.details)
    for (const secret of [code, newPassword, member.phone!]) expect(details).not.toContain(secret)
  })

  it('refuses even the right code after SVC_OTP_MAX_ATTEMPTS wrong ones, and changes nothing', async () => {
    const { tenant, member, code } = await memberWithCode()
    const before = await passwordHashOf(member.id)
    let wrong = code
    for (let attempt = 0; attempt < 5; attempt++) {
      wrong = otherCode(wrong)
      expectProblem(await resetAs(tenant, member, wrong), 400, 'OTP_INVALID')
    }
    expectProblem(await resetAs(tenant, member, code), 400, 'OTP_INVALID')
    expect(await passwordHashOf(member.id)).toBe(before)
    expect((await signIn(tenant, member, member.password)).response.statusCode).toBe(200)
  })

  it('counts the fourth wrong try and still takes the right code before the fifth', async () => {
    const { tenant, member, code } = await memberWithCode()
    let wrong = code
    for (let attempt = 0; attempt < 4; attempt++) {
      wrong = otherCode(wrong)
      expectProblem(await resetAs(tenant, member, wrong), 400, 'OTP_INVALID')
    }
    expect((await storedCode(bed.owner, member.id, 'PASSWORD_RESET'))?.attempts).toBe(4)
    expect((await resetAs(tenant, member, code)).statusCode).toBe(204)
  })

  it('never takes a used code again', async () => {
    const { tenant, member, code } = await memberWithCode()
    expect((await resetAs(tenant, member, code)).statusCode).toBe(204)
    const afterFirst = await passwordHashOf(member.id)
    expectProblem(await resetAs(tenant, member, code), 400, 'OTP_INVALID')
    expect(await passwordHashOf(member.id)).toBe(afterFirst)
  })

  it("never takes one user's code for another: same academy, or another academy with the same login id and phone", async () => {
    const { tenant, member, code } = await memberWithCode()
    const colleague = await insertMember(bed.owner, tenant, { phone: member.phone })
    const elsewhere = await createAcademy(bed.owner)
    const twin = await insertMember(bed.owner, elsewhere, { loginId: member.userLoginId, phone: member.phone })
    const colleagueHash = await passwordHashOf(colleague.id)
    const twinHash = await passwordHashOf(twin.id)

    expectProblem(await resetAs(tenant, colleague, code), 400, 'OTP_INVALID')
    expectProblem(await resetAs(elsewhere, twin, code), 400, 'OTP_INVALID')
    expect(await passwordHashOf(colleague.id)).toBe(colleagueHash)
    expect(await passwordHashOf(twin.id)).toBe(twinHash)
    // The owner of the code still can: the others' tries touched nothing of it.
    expect((await storedCode(bed.owner, member.id, 'PASSWORD_RESET'))?.attempts).toBe(0)
    expect((await resetAs(tenant, member, code)).statusCode).toBe(204)
  })

  itConcurrent('lets exactly one of two resets racing with one code succeed', async () => {
    // Several races at once, so that the two requests of a pair overlap in the database, not one after the other.
    const races: Array<Awaited<ReturnType<typeof memberWithCode>>> = []
    for (let race = 0; race < 6; race++) races.push(await memberWithCode())
    await Promise.all(
      races.map(async ({ tenant, member, code }) => {
        const passwords = [strongPassword(), strongPassword()]
        const answers = await Promise.all(passwords.map((password) => resetAs(tenant, member, code, password)))
        expect(answers.map((answer) => answer.statusCode).sort()).toEqual([204, 400])
        expectProblem(answers.find((answer) => answer.statusCode === 400)!, 400, 'OTP_INVALID')
        const winner = passwords[answers.findIndex((answer) => answer.statusCode === 204)]!
        expect((await signIn(tenant, member, winner)).response.statusCode).toBe(200)
        const events = await bed.owner.selectFrom('auditEvents').select('type').where('tenantId', '=', tenant.id).where('type', '=', 'PASSWORD_RESET').execute()
        expect(events).toHaveLength(1)
      }),
    )
  })

  it('refuses an expired code', async () => {
    const { tenant, member, code } = await memberWithCode()
    await bed.owner.updateTable('oneTimeCodes').set({ expiresAt: new Date(Date.now() - 1000) }).where('userId', '=', member.id).execute()
    expectProblem(await resetAs(tenant, member, code), 400, 'OTP_INVALID')
    expect(await storedCode(bed.owner, member.id, 'PASSWORD_RESET')).toBeUndefined()
  })

  it('answers an unknown account exactly as a wrong code, and writes no event for either', async () => {
    const { tenant, member, code } = await memberWithCode()
    const wrongCode = visible(await resetAs(tenant, member, otherCode(code)))
    const unknownUser = visible(await reset({ userLoginId: `nobody-${randomBytes(4).toString('hex')}`, customId: tenant.customId, code, newPassword: strongPassword() }))
    const unknownTenant = visible(await reset({ userLoginId: member.userLoginId, customId: 'NOSUCHONE', code, newPassword: strongPassword() }))
    const unknownOwner = visible(await reset({ userLoginId: member.userLoginId, code, newPassword: strongPassword() }))
    expect(wrongCode.status).toBe(400)
    expect(wrongCode.problem.code).toBe('OTP_INVALID')
    for (const answer of [unknownUser, unknownTenant, unknownOwner]) expect(answer).toEqual(wrongCode)
    expect(await bed.owner.selectFrom('auditEvents').select('id').where('tenantId', '=', tenant.id).execute()).toEqual([])
  })

  it('refuses the code of a user suspended after it was sent, without counting a try', async () => {
    const { tenant, member, code } = await memberWithCode()
    await bed.owner.updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', member.id).execute()
    expectProblem(await resetAs(tenant, member, code), 400, 'OTP_INVALID')
    expect((await storedCode(bed.owner, member.id, 'PASSWORD_RESET'))?.attempts).toBe(0)
  })

  it('answers AUTH_012 for a password the policy refuses, before the code is looked at', async () => {
    const { tenant, member, code } = await memberWithCode()
    const weak = await resetAs(tenant, member, code, 'password')
    expectProblem(weak, 400, 'AUTH_012')
    expectProblem(await resetAs(tenant, member, code, `X9${member.userLoginId}`), 400, 'AUTH_012')
    expect((await storedCode(bed.owner, member.id, 'PASSWORD_RESET'))?.attempts).toBe(0)
    expect((await resetAs(tenant, member, code)).statusCode).toBe(204)
  })

  it('refuses a malformed body with VALIDATION_FAILED (never a 500) and touches no code', async () => {
    const { tenant, member } = await memberWithCode()
    const base = { userLoginId: member.userLoginId, customId: tenant.customId, code: '123456', newPassword: strongPassword() }
    const malformed = [
      { ...base, code: '12345' },
      { ...base, code: 123456 },
      { ...base, code: '12345６' },
      { ...base, newPassword: '' },
      { ...base, secondFactor: { method: 'SMS', code: '123456' } },
      { ...base, secondFactor: { method: 'TOTP' } },
      { ...base, extra: true },
      { userLoginId: member.userLoginId, code: '123456' },
    ]
    for (const payload of malformed) expectProblem(await reset(payload), 400, 'VALIDATION_FAILED')
    expect((await storedCode(bed.owner, member.id, 'PASSWORD_RESET'))?.attempts).toBe(0)
  })

  it('ignores a stale token: the prefix reads none', async () => {
    const { tenant, member, code } = await memberWithCode()
    const response = await resetAs(tenant, member, code, strongPassword(), { headers: { authorization: 'Bearer garbage' } })
    expect(response.statusCode).toBe(204)
  })
})
