import type { LightMyRequestResponse } from 'fastify'
import { describe, expect, it } from 'vitest'
import { verifyPassword } from '../../../lib/sign-in/password-hash.js'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import { decodeJwt, expectAppError, expectProblem, login, strongPassword, uniqueAddress } from '../../support/auth-fixtures.js'
import {
  bearerFor,
  codeSentTo,
  createAcademy,
  insertMember,
  otherCode,
  storedCode,
  useRecoveryBed,
  type Academy,
  type Member,
} from '../recovery-bed.js'
import {
  enrolTotp,
  freshTotpCode,
  mfaCall,
  mfaCookieOf,
  mfaStatus,
  notTheTotpCode,
  passwordStep,
  secondStep,
  storedRecoveryCodes,
  storedSecondFactors,
} from './mfa-bed.js'

const bed = useRecoveryBed()

type SecondFactor = { method: string; code: string }

const forgot = (tenant: Academy, member: Pick<Member, 'userLoginId'>) =>
  bed.app.inject({ method: 'POST', url: '/v1/password/forgot', payload: { userLoginId: member.userLoginId, customId: tenant.customId } })

function reset(tenant: Academy, member: Member, code: string, secondFactor?: SecondFactor, newPassword = strongPassword()) {
  const payload = { userLoginId: member.userLoginId, customId: tenant.customId, code, newPassword, ...(secondFactor ? { secondFactor } : {}) }
  return bed.app.inject({ method: 'POST', url: '/v1/password/reset', payload })
}

/** The code of a reset the member asked for, as its phone received it. */
async function resetCodeFor(tenant: Academy, member: Member): Promise<string> {
  expect((await forgot(tenant, member)).statusCode).toBe(202)
  return codeSentTo(bed, member.phone!)
}

async function memberWithTotp() {
  const tenant = await createAcademy(bed.owner)
  const member = await insertMember(bed.owner, tenant)
  const bearer = await bearerFor(bed.app, member, tenant)
  return { tenant, member, bearer, ...(await enrolTotp(bed.app, bearer, member.password)) }
}

const attemptsOf = async (member: Member) => (await storedCode(bed.owner, member.id, 'PASSWORD_RESET'))?.attempts

const passwordHashOf = async (userId: number) =>
  (await bed.owner.selectFrom('users').select('passwordHash').where('id', '=', userId).executeTakeFirstOrThrow()).passwordHash

/** The answer of the password step with `password`: its JSON, after insisting on 200. */
async function loginWith(tenant: Academy, member: Member, password: string) {
  const response = await passwordStep(bed.app, { ...member, password }, tenant)
  expect(response.statusCode, response.body).toBe(200)
  return response.json() as { mfaRequired?: true; methods?: string[]; user?: { id: number } }
}

/** Asserts the reset went through: 204, no body. */
function expectReset(response: LightMyRequestResponse) {
  expect(response.statusCode, response.body).toBe(204)
  expect(response.body).toBe('')
}

describe('POST /v1/password/reset of a user with TOTP', () => {
  it('answers MFA_REQUIRED without secondFactor, the SMS code staying live with the try counted', async () => {
    const { tenant, member, secret } = await memberWithTotp()
    const code = await resetCodeFor(tenant, member)
    const before = await passwordHashOf(member.id)
    expectProblem(await reset(tenant, member, code), 400, 'MFA_REQUIRED')
    expect(await attemptsOf(member)).toBe(1)
    expect(await passwordHashOf(member.id)).toBe(before)
    expect(await loginWith(tenant, member, member.password)).toMatchObject({ mfaRequired: true })

    const newPassword = strongPassword()
    const proof = { method: 'TOTP', code: await freshTotpCode(bed.owner, member.id, secret) }
    expectReset(await reset(tenant, member, code, proof, newPassword))
    expect(await verifyPassword(newPassword, await passwordHashOf(member.id))).toBe(true)
  })

  it("answers MFA_REQUIRED for a wrong TOTP code, another secret's code, or a recovery code that is not the user's; each try counted", async () => {
    const { tenant, member, secret, recoveryCodes } = await memberWithTotp()
    const stranger = await memberWithTotp()
    const code = await resetCodeFor(tenant, member)
    const before = await passwordHashOf(member.id)
    const wrong: SecondFactor[] = [
      { method: 'TOTP', code: notTheTotpCode(secret) },
      { method: 'TOTP', code: totpCode(stranger.secret) },
      { method: 'RECOVERY_CODE', code: stranger.recoveryCodes[0]! },
      { method: 'RECOVERY_CODE', code: `${recoveryCodes[0]!.slice(0, -1)}${recoveryCodes[0]!.endsWith('z') ? 'y' : 'z'}` },
    ]
    for (const [tries, proof] of wrong.entries()) {
      expectProblem(await reset(tenant, member, code, proof), 400, 'MFA_REQUIRED')
      expect({ proof, attempts: await attemptsOf(member) }).toEqual({ proof, attempts: tries + 1 })
    }
    expect(await passwordHashOf(member.id)).toBe(before)
    // Nothing of the stranger's was used up by being tried on another account.
    expect(await storedRecoveryCodes(bed.owner, stranger.member.id)).toHaveLength(10)
    expectReset(await reset(tenant, member, code, { method: 'RECOVERY_CODE', code: recoveryCodes[0]! }))
  })

  it('resets with a TOTP code: every session ends, the factor stays, and the step signs in nowhere else', async () => {
    const { tenant, member, bearer, secret } = await memberWithTotp()
    const credentials = { userLoginId: member.userLoginId, password: member.password, customId: tenant.customId }
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    const session = await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, member.id, secret))
    expect(session.statusCode).toBe(200)
    const access = { authorization: `Bearer ${session.cookies.find((c) => c.name === 'svc_access_token')!.value}` }

    const code = await resetCodeFor(tenant, member)
    const totp = await freshTotpCode(bed.owner, member.id, secret)
    const newPassword = strongPassword()
    expectReset(await reset(tenant, member, code, { method: 'TOTP', code: totp }, newPassword))
    expect(await storedCode(bed.owner, member.id, 'PASSWORD_RESET')).toBeUndefined()
    expectProblem(await bed.app.inject({ method: 'GET', url: '/v1/me', headers: access }), 401, 'AUTH_004')
    expectProblem((await login(bed.app, credentials, { remoteAddress: uniqueAddress() })).response, 401, 'AUTH_001')

    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    const next = await loginWith(tenant, member, newPassword)
    expect(next).toMatchObject({ mfaRequired: true, methods: ['TOTP', 'RECOVERY_CODE'] })
    const retry = mfaCookieOf(await passwordStep(bed.app, { ...member, password: newPassword }, tenant))
    expectProblem(await secondStep(bed.app, retry, 'TOTP', totp), 401, 'MFA_CODE_INVALID')
  })

  it('resets with a recovery code as typed, using it up', async () => {
    const { tenant, member, bearer, recoveryCodes } = await memberWithTotp()
    const code = await resetCodeFor(tenant, member)
    const newPassword = strongPassword()
    expectReset(await reset(tenant, member, code, { method: 'RECOVERY_CODE', code: recoveryCodes[4]!.toUpperCase() }, newPassword))
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 9 })
    const cookie = mfaCookieOf(await passwordStep(bed.app, { ...member, password: newPassword }, tenant))
    expectProblem(await secondStep(bed.app, cookie, 'RECOVERY_CODE', recoveryCodes[4]!), 401, 'MFA_CODE_INVALID')
  })

  it('spends no second factor on a wrong SMS code: OTP_INVALID, and the recovery code stays live', async () => {
    const { tenant, member, recoveryCodes } = await memberWithTotp()
    const code = await resetCodeFor(tenant, member)
    const proof = { method: 'RECOVERY_CODE', code: recoveryCodes[0]! }
    expectProblem(await reset(tenant, member, otherCode(code), proof), 400, 'OTP_INVALID')
    expect(await storedRecoveryCodes(bed.owner, member.id)).toHaveLength(10)
    expectReset(await reset(tenant, member, code, proof))
    expect(await storedRecoveryCodes(bed.owner, member.id)).toHaveLength(9)
  })

  it('kills the SMS code after five tries without the second factor: then even the right TOTP is OTP_INVALID', async () => {
    const { tenant, member, secret } = await memberWithTotp()
    const code = await resetCodeFor(tenant, member)
    const before = await passwordHashOf(member.id)
    for (let attempt = 0; attempt < 5; attempt++) expectProblem(await reset(tenant, member, code), 400, 'MFA_REQUIRED')
    const proof = { method: 'TOTP', code: await freshTotpCode(bed.owner, member.id, secret) }
    expectProblem(await reset(tenant, member, code, proof), 400, 'OTP_INVALID')
    expect(await passwordHashOf(member.id)).toBe(before)
  })

  it('asks nothing more while the TOTP enrolment is only pending', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const bearer = await bearerFor(bed.app, member, tenant)
    expect((await mfaCall(bed.app, bearer, '/totp', { password: member.password })).statusCode).toBe(200)
    const code = await resetCodeFor(tenant, member)
    expectReset(await reset(tenant, member, code))
  })
})

describe('POST /v1/password/reset of a user whose only factor is SMS', () => {
  it('resets with the SMS code alone, and the SMS factor stays', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const bearer = await bearerFor(bed.app, member, tenant)
    expect((await mfaCall(bed.app, bearer, '/sms', { password: member.password })).statusCode).toBe(204)
    expect((await mfaCall(bed.app, bearer, '/recovery-codes', { password: member.password })).statusCode).toBe(200)

    const code = await resetCodeFor(tenant, member)
    const newPassword = strongPassword()
    expectReset(await reset(tenant, member, code, undefined, newPassword))
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: false, sms: true, recoveryCodesLeft: 10 })
    expect(await loginWith(tenant, member, newPassword)).toMatchObject({ mfaRequired: true, methods: ['SMS', 'RECOVERY_CODE'] })
  })
})

describe('the in-process contract with second factors', () => {
  const contract = () => bed.app.authContract

  /** A user made through the contract, signed in with its temporary password (no factor: tokens at once). */
  async function createdAndSignedIn() {
    const tenant = await createAcademy(bed.owner)
    const created = await contract().createUser('Park Teacher', null, 'INSTRUCTOR', tenant.id)
    const member: Member = { id: created.userId, tenantId: tenant.id, userLoginId: created.userLoginId, password: created.temporaryPassword, phone: null }
    const signedIn = await login(bed.app, { userLoginId: member.userLoginId, password: member.password, customId: tenant.customId })
    expect(signedIn.response.statusCode, signedIn.response.body).toBe(200)
    return { tenant, member, created, bearer: signedIn.bearer }
  }

  it('createUser makes a user without a factor: all off, and login answers tokens directly', async () => {
    const { tenant, member, bearer } = await createdAndSignedIn()
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: false, sms: false, recoveryCodesLeft: 0 })
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
    const again = await loginWith(tenant, member, member.password)
    expect(again).toMatchObject({ user: { id: member.id } })
    expect(again.mfaRequired).toBeUndefined()
  })

  it('validateToken and getUserInfo answer for a session opened at the second step as for any other', async () => {
    const { tenant, member, bearer } = await createdAndSignedIn()
    const { secret } = await enrolTotp(bed.app, bearer, member.password)
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    const second = await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, member.id, secret))
    expect(second.statusCode, second.body).toBe(200)
    const access = second.cookies.find((c) => c.name === 'svc_access_token')!.value

    const identity = await contract().validateToken(access)
    expect(Object.keys(identity).sort()).toEqual(['expiresAt', 'jti', 'role', 'sid', 'tenantId', 'tenantSlug', 'userId'])
    expect(identity).toMatchObject({ userId: member.id, tenantId: tenant.id, tenantSlug: tenant.slug, role: 'INSTRUCTOR', sid: decodeJwt(access).sid })
    expect(await contract().getUserInfo(access)).toEqual({
      id: member.id,
      email: member.userLoginId,
      name: 'Park Teacher',
      role: 'INSTRUCTOR',
      tenantSlug: tenant.slug,
      tenantId: tenant.id,
    })
    await contract().forTenant(tenant.id).deleteUser(member.id)
    await expectAppError(contract().validateToken(access), 'AUTH_004')
  })

  it('resetPassword keeps the factors: the next login still asks for the second factor, with the same secret and codes', async () => {
    const { tenant, member, bearer } = await createdAndSignedIn()
    const { secret, recoveryCodes } = await enrolTotp(bed.app, bearer, member.password)
    const factorsBefore = await storedSecondFactors(bed.owner, member.id)

    const temporaryPassword = await contract().forTenant(tenant.id).resetPassword(member.id)
    expect(await storedSecondFactors(bed.owner, member.id)).toEqual(factorsBefore)
    expect(await storedRecoveryCodes(bed.owner, member.id)).toHaveLength(10)
    const next = await loginWith(tenant, member, temporaryPassword)
    expect(next).toMatchObject({ mfaRequired: true, methods: ['TOTP', 'RECOVERY_CODE'] })
    expect(next.user).toBeUndefined()

    const afterReset = { ...member, password: temporaryPassword }
    const byTotp = mfaCookieOf(await passwordStep(bed.app, afterReset, tenant))
    expect((await secondStep(bed.app, byTotp, 'TOTP', await freshTotpCode(bed.owner, member.id, secret))).statusCode).toBe(200)
    const byCode = mfaCookieOf(await passwordStep(bed.app, afterReset, tenant))
    expect((await secondStep(bed.app, byCode, 'RECOVERY_CODE', recoveryCodes[0]!)).statusCode).toBe(200)
  })
})
