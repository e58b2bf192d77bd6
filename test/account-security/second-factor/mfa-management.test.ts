import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import type { Role } from '../../../db/schema.js'
import type { AuditEventType } from '../../../lib/audit/event-types.js'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import { expectProblem, login, refresh, uniqueAddress } from '../../support/auth-fixtures.js'
import { bearerFor, createAcademy, insertMember, useRecoveryBed, type Academy, type Member } from '../recovery-bed.js'
import {
  enrolTotp,
  notTheTotpCode,
  freshTotpCode,
  mfaCall,
  mfaCookieOf,
  mfaStatus,
  passwordStep,
  secondStep,
  storedRecoveryCodes,
  storedSecondFactors,
} from './mfa-bed.js'

const bed = useRecoveryBed()

const ROLES: Role[] = ['OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT']
const OFF = { totp: false, sms: false, recoveryCodesLeft: 0 }
const RECOVERY_CODE = /^[a-km-np-z2-9]{5}-[a-km-np-z2-9]{5}$/

type Bearer = Record<string, string>

/** A member of a fresh academy (verified phone unless said otherwise) with a bearer token of its role. */
async function signedIn(options: { role?: Role; phone?: string | null; verified?: boolean; tenant?: Academy; loginId?: string } = {}) {
  const tenant = options.tenant ?? (await createAcademy(bed.owner))
  const role = options.role ?? 'STUDENT'
  const member = await insertMember(bed.owner, tenant, { ...options, role })
  return { tenant, member, bearer: await bearerFor(bed.app, member, tenant, role) }
}

async function withTotp(options: Parameters<typeof signedIn>[0] = {}) {
  const caller = await signedIn(options)
  return { ...caller, ...(await enrolTotp(bed.app, caller.bearer, caller.member.password)) }
}

const enableSms = (bearer: Bearer, member: Member) => mfaCall(bed.app, bearer, '/sms', { password: member.password })

/** The events of these types the academy recorded (read as the owner), oldest first. */
function eventsOf(tenant: Academy, types: AuditEventType[] = ['MFA_ENABLED', 'MFA_DISABLED', 'RECOVERY_CODES_REGENERATED']) {
  return bed.owner
    .selectFrom('auditEvents')
    .select(['type', 'actorId', 'targetType', 'targetId', 'details'])
    .where('tenantId', '=', tenant.id)
    .where('type', 'in', types)
    .orderBy('id')
    .execute()
}

/** The login's answer after its password step: tokens for a user without a factor, `mfaRequired` otherwise. */
async function loginAnswer(app: FastifyInstance, member: Member, tenant: Academy) {
  const response = await passwordStep(app, member, tenant)
  expect(response.statusCode, response.body).toBe(200)
  return response.json() as { mfaRequired?: true; methods?: string[]; user?: { id: number } }
}

/** A full two-step login with a recovery code: its status (200 when the code was live). */
async function signInWithRecoveryCode(member: Member, tenant: Academy, code: string) {
  const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
  return secondStep(bed.app, cookie, 'RECOVERY_CODE', code)
}

/** Each malformed body answers VALIDATION_FAILED as problem+json. */
async function expectEachInvalid(bearer: Bearer, path: string, payloads: unknown[]) {
  for (const payload of payloads) {
    const response = await bed.app.inject({ method: 'POST', url: `/v1/me/mfa${path}`, headers: bearer, payload: payload as object })
    expect({ payload, status: response.statusCode }).toEqual({ payload, status: 400 })
    expectProblem(response, 400, 'VALIDATION_FAILED')
  }
}

const PASSWORD_BODIES_INVALID = (password: string) => [
  {},
  { password: '' },
  { password: 12345678 },
  { password: null },
  { password: [password] },
  { password, extra: true },
  { password, code: '123456' },
]

describe('GET /v1/me/mfa', () => {
  it('answers all off for a user without a factor', async () => {
    const { bearer } = await signedIn()
    const response = await bed.app.inject({ method: 'GET', url: '/v1/me/mfa', headers: bearer })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual(OFF)
  })

  it('answers the enabled factors and the recovery codes left, one fewer after a code signed in', async () => {
    const { tenant, member, bearer, recoveryCodes } = await withTotp()
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: true, recoveryCodesLeft: 10 })
    expect((await signInWithRecoveryCode(member, tenant, recoveryCodes[0]!)).statusCode).toBe(200)
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: true, recoveryCodesLeft: 9 })
  })

  it('answers AUTH_002 without a token', async () => {
    expectProblem(await bed.app.inject({ method: 'GET', url: '/v1/me/mfa' }), 401, 'AUTH_002')
  })

  it.each(ROLES)('lets a %s read its own factors', async (role) => {
    const { bearer } = await withTotp({ role })
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
  })

  it("shows each academy's user only its own factors, even under the same login id", async () => {
    const a = await withTotp({ role: 'OWNER' })
    const b = await signedIn({ role: 'OWNER', loginId: a.member.userLoginId, phone: a.member.phone })
    expect(await mfaStatus(bed.app, b.bearer)).toEqual(OFF)
    expect((await enableSms(b.bearer, b.member)).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, b.bearer)).toEqual({ totp: false, sms: true, recoveryCodesLeft: 0 })
    expect(await mfaStatus(bed.app, a.bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
  })

  it("refuses a token of another academy naming the user's id: it neither reads nor changes the user's factors", async () => {
    const victim = await withTotp()
    const crossed = await bearerFor(bed.app, victim.member, await createAcademy(bed.owner))
    const read = await bed.app.inject({ method: 'GET', url: '/v1/me/mfa', headers: crossed })
    expect(read.statusCode).toBe(401)
    expect(read.body).not.toContain('recoveryCodesLeft')
    expect((await mfaCall(bed.app, crossed, '/totp/disable', { password: victim.member.password })).statusCode).toBe(401)
    expect((await mfaCall(bed.app, crossed, '/recovery-codes', { password: victim.member.password })).statusCode).toBe(401)
    expect(await mfaStatus(bed.app, victim.bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    expect((await signInWithRecoveryCode(victim.member, victim.tenant, victim.recoveryCodes[0]!)).statusCode).toBe(200)
  })
})

describe('POST /v1/me/mfa/totp', () => {
  it('answers a base32 secret, its otpauth URI and QR code, pending until confirmed', async () => {
    const { tenant, member, bearer } = await signedIn()
    const response = await mfaCall(bed.app, bearer, '/totp', { password: member.password })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json() as { secret: string; otpauthUri: string; qrCode: string }
    expect(Object.keys(body).sort()).toEqual(['otpauthUri', 'qrCode', 'secret'])
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/)

    const uri = new URL(body.otpauthUri)
    expect(uri.protocol).toBe('otpauth:')
    expect(uri.host).toBe('totp')
    expect(decodeURIComponent(uri.pathname)).toBe(`/${tenant.name}:${member.userLoginId}`)
    expect(Object.fromEntries(uri.searchParams)).toEqual({ issuer: tenant.name, secret: body.secret, algorithm: 'SHA1', digits: '6', period: '30' })

    expect(body.qrCode.startsWith('data:image/svg+xml;base64,')).toBe(true)
    const svg = Buffer.from(body.qrCode.slice('data:image/svg+xml;base64,'.length), 'base64').toString('utf8')
    expect(svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/)

    // Pending: stored sealed, not a factor, asked for at no login.
    const row = await storedSecondFactors(bed.owner, member.id)
    expect(row).toMatchObject({ totpSecret: null, totpEnabledAt: null, smsEnabledAt: null })
    expect(row?.totpPendingSecret).toMatch(/^v1\./)
    expect(row?.totpPendingSecret).not.toContain(body.secret)
    expect(await mfaStatus(bed.app, bearer)).toEqual(OFF)
    expect(await loginAnswer(bed.app, member, tenant)).toMatchObject({ user: { id: member.id } })
    expect(await eventsOf(tenant)).toEqual([])
  })

  it('answers a new secret each time; only the latest one confirms', async () => {
    const { member, bearer } = await signedIn()
    const first = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json().secret as string
    const second = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json().secret as string
    expect(second).not.toBe(first)
    expectProblem(await mfaCall(bed.app, bearer, '/totp/confirm', { code: totpCode(first) }), 400, 'OTP_INVALID')
    expect((await mfaCall(bed.app, bearer, '/totp/confirm', { code: totpCode(second) })).statusCode).toBe(200)
  })

  it('keeps the enabled secret working until a new enrolment is confirmed, then only the new one', async () => {
    const { tenant, member, bearer, secret: old } = await withTotp()
    const restarted = await mfaCall(bed.app, bearer, '/totp', { password: member.password })
    expect(restarted.statusCode).toBe(200)
    const { secret: next } = restarted.json() as { secret: string }
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })

    const signIn = async (secret: string) => {
      const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
      return secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, member.id, secret))
    }
    expectProblem(await signIn(next), 401, 'MFA_CODE_INVALID')
    expect((await signIn(old)).statusCode).toBe(200)

    await bed.owner.updateTable('userSecondFactors').set({ totpLastStep: null }).where('userId', '=', member.id).execute()
    expect((await mfaCall(bed.app, bearer, '/totp/confirm', { code: totpCode(next) })).statusCode).toBe(200)
    expectProblem(await signIn(old), 401, 'MFA_CODE_INVALID')
    expect((await signIn(next)).statusCode).toBe(200)
  })

  it('answers AUTH_013 for a wrong password and stores nothing', async () => {
    const { tenant, member, bearer } = await signedIn()
    const response = await mfaCall(bed.app, bearer, '/totp', { password: 'Not-The-Password-1' })
    expectProblem(response, 400, 'AUTH_013')
    expect(response.body).not.toContain('otpauth')
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
    expect(await eventsOf(tenant)).toEqual([])
  })

  it('answers AUTH_002 without a token', async () => {
    const { member } = await signedIn()
    expectProblem(await mfaCall(bed.app, {}, '/totp', { password: member.password }), 401, 'AUTH_002')
  })

  it.each(ROLES)('lets a %s enrol', async (role) => {
    const { member, bearer } = await signedIn({ role })
    expect((await mfaCall(bed.app, bearer, '/totp', { password: member.password })).statusCode).toBe(200)
  })

  it('refuses a malformed body with VALIDATION_FAILED and stores nothing', async () => {
    const { member, bearer } = await signedIn()
    await expectEachInvalid(bearer, '/totp', PASSWORD_BODIES_INVALID(member.password))
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
  })
})

describe('POST /v1/me/mfa/totp/confirm', () => {
  it('enables TOTP with the app code and answers ten recovery codes, stored as hashes; MFA_ENABLED recorded', async () => {
    const { tenant, member, bearer } = await signedIn()
    const { secret } = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json() as { secret: string }
    const response = await mfaCall(bed.app, bearer, '/totp/confirm', { code: totpCode(secret) })
    expect(response.statusCode, response.body).toBe(200)
    const { recoveryCodes } = response.json() as { recoveryCodes: string[] }
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    for (const code of recoveryCodes) expect(code).toMatch(RECOVERY_CODE)

    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    const row = await storedSecondFactors(bed.owner, member.id)
    expect(row).toMatchObject({ totpPendingSecret: null, totpEnabledAt: expect.any(Date), smsEnabledAt: null })
    expect(row?.totpSecret).toMatch(/^v1\./)
    const hashes = (await storedRecoveryCodes(bed.owner, member.id)).join()
    for (const code of recoveryCodes) expect(hashes).not.toContain(code.replace('-', ''))

    expect(await loginAnswer(bed.app, member, tenant)).toMatchObject({ mfaRequired: true, methods: ['TOTP', 'RECOVERY_CODE'] })
    expect(await eventsOf(tenant)).toEqual([
      { type: 'MFA_ENABLED', actorId: member.id, targetType: 'USER', targetId: String(member.id), details: { method: 'TOTP' } },
    ])
  })

  it('takes the step it confirmed with: that code then signs in nowhere', async () => {
    const { tenant, member, bearer } = await signedIn()
    const { secret } = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json() as { secret: string }
    const code = totpCode(secret)
    expect((await mfaCall(bed.app, bearer, '/totp/confirm', { code })).statusCode).toBe(200)
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', code), 401, 'MFA_CODE_INVALID')
  })

  it('answers OTP_INVALID when no enrolment is pending, with TOTP off or already on', async () => {
    const off = await signedIn()
    expectProblem(await mfaCall(bed.app, off.bearer, '/totp/confirm', { code: '123456' }), 400, 'OTP_INVALID')
    expect(await mfaStatus(bed.app, off.bearer)).toEqual(OFF)

    const on = await withTotp()
    expectProblem(await mfaCall(bed.app, on.bearer, '/totp/confirm', { code: await freshTotpCode(bed.owner, on.member.id, on.secret) }), 400, 'OTP_INVALID')
    // The codes were not reissued.
    expect((await signInWithRecoveryCode(on.member, on.tenant, on.recoveryCodes[0]!)).statusCode).toBe(200)
  })

  it('answers OTP_INVALID for a wrong code; TOTP stays off and the enrolment pending', async () => {
    const { tenant, member, bearer } = await signedIn()
    const { secret } = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json() as { secret: string }
    const right = totpCode(secret)
    const wrong = notTheTotpCode(secret)
    expectProblem(await mfaCall(bed.app, bearer, '/totp/confirm', { code: wrong }), 400, 'OTP_INVALID')
    expect(await mfaStatus(bed.app, bearer)).toEqual(OFF)
    expect(await storedSecondFactors(bed.owner, member.id)).toMatchObject({ totpSecret: null, totpEnabledAt: null })
    expect(await storedRecoveryCodes(bed.owner, member.id)).toEqual([])
    expect(await loginAnswer(bed.app, member, tenant)).toMatchObject({ user: { id: member.id } })
    expect(await eventsOf(tenant)).toEqual([])
    expect((await mfaCall(bed.app, bearer, '/totp/confirm', { code: right })).statusCode).toBe(200)
  })

  it('answers AUTH_002 without a token and leaves the enrolment pending', async () => {
    const { member, bearer } = await signedIn()
    const { secret } = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json() as { secret: string }
    expectProblem(await mfaCall(bed.app, {}, '/totp/confirm', { code: totpCode(secret) }), 401, 'AUTH_002')
    expect(await mfaStatus(bed.app, bearer)).toEqual(OFF)
  })

  it.each(ROLES)('lets a %s confirm its enrolment', async (role) => {
    const { bearer } = await withTotp({ role })
    expect(await mfaStatus(bed.app, bearer)).toMatchObject({ totp: true })
  })

  it("never confirms another academy's user's enrolment: a code of that secret is OTP_INVALID", async () => {
    const a = await signedIn()
    const { secret } = (await mfaCall(bed.app, a.bearer, '/totp', { password: a.member.password })).json() as { secret: string }
    const b = await signedIn({ loginId: a.member.userLoginId })
    expectProblem(await mfaCall(bed.app, b.bearer, '/totp/confirm', { code: totpCode(secret) }), 400, 'OTP_INVALID')
    expect(await mfaStatus(bed.app, b.bearer)).toEqual(OFF)
    expect((await mfaCall(bed.app, a.bearer, '/totp/confirm', { code: totpCode(secret) })).statusCode).toBe(200)
  })

  it('refuses a code that is not six digits, and any other malformed body, with VALIDATION_FAILED', async () => {
    const { member, bearer } = await signedIn()
    const { secret } = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json() as { secret: string }
    const code = totpCode(secret)
    await expectEachInvalid(bearer, '/totp/confirm', [
      {},
      { code: code.slice(1) },
      { code: `${code}0` },
      { code: Number(`1${code}`) },
      { code: 'abcdef' },
      { code: `${code.slice(0, 3)} ${code.slice(3)}` },
      { code: '１２３４５６' },
      { code, extra: true },
      { code, password: member.password },
      { password: member.password },
    ])
    expect(await mfaStatus(bed.app, bearer)).toEqual(OFF)
    expect((await mfaCall(bed.app, bearer, '/totp/confirm', { code })).statusCode).toBe(200)
  })
})

describe('POST /v1/me/mfa/totp/disable', () => {
  it('turns off the last factor and deletes the recovery codes with it; MFA_DISABLED recorded', async () => {
    const { tenant, member, bearer, recoveryCodes } = await withTotp()
    const response = await mfaCall(bed.app, bearer, '/totp/disable', { password: member.password })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect(await mfaStatus(bed.app, bearer)).toEqual(OFF)
    expect(await storedRecoveryCodes(bed.owner, member.id)).toEqual([])
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
    expect(await loginAnswer(bed.app, member, tenant)).toMatchObject({ user: { id: member.id } })
    expect((await eventsOf(tenant)).at(-1)).toEqual({
      type: 'MFA_DISABLED',
      actorId: member.id,
      targetType: 'USER',
      targetId: String(member.id),
      details: { method: 'TOTP', recoveryCodesVoided: true },
    })

    // The old codes stay void when a factor comes back: enabling SMS issues no codes and revives none.
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: false, sms: true, recoveryCodesLeft: 0 })
    expectProblem(await signInWithRecoveryCode(member, tenant, recoveryCodes[0]!), 401, 'MFA_CODE_INVALID')
  })

  it('keeps the recovery codes while SMS is still on', async () => {
    const { tenant, member, bearer, recoveryCodes } = await withTotp()
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expect((await mfaCall(bed.app, bearer, '/totp/disable', { password: member.password })).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: false, sms: true, recoveryCodesLeft: 10 })
    expect(await storedRecoveryCodes(bed.owner, member.id)).toHaveLength(10)
    expect(await storedSecondFactors(bed.owner, member.id)).toMatchObject({ totpSecret: null, totpEnabledAt: null, smsEnabledAt: expect.any(Date) })
    expect((await eventsOf(tenant, ['MFA_DISABLED']))[0]?.details).toEqual({ method: 'TOTP', recoveryCodesVoided: false })
    expect(await loginAnswer(bed.app, member, tenant)).toMatchObject({ mfaRequired: true, methods: ['SMS', 'RECOVERY_CODE'] })
    expect((await signInWithRecoveryCode(member, tenant, recoveryCodes[9]!)).statusCode).toBe(200)
  })

  it('ends a pending enrolment too, recording nothing when TOTP was not on', async () => {
    const { tenant, member, bearer } = await signedIn()
    const { secret } = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json() as { secret: string }
    expect((await mfaCall(bed.app, bearer, '/totp/disable', { password: member.password })).statusCode).toBe(204)
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
    expectProblem(await mfaCall(bed.app, bearer, '/totp/confirm', { code: totpCode(secret) }), 400, 'OTP_INVALID')
    expect(await eventsOf(tenant)).toEqual([])
  })

  it('answers AUTH_013 for a wrong password and leaves TOTP on', async () => {
    const { tenant, member, bearer } = await withTotp()
    expectProblem(await mfaCall(bed.app, bearer, '/totp/disable', { password: `${member.password}x` }), 400, 'AUTH_013')
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    expect(await eventsOf(tenant, ['MFA_DISABLED'])).toEqual([])
  })

  it('answers AUTH_002 without a token and leaves TOTP on', async () => {
    const { member, bearer } = await withTotp()
    expectProblem(await mfaCall(bed.app, {}, '/totp/disable', { password: member.password }), 401, 'AUTH_002')
    expect(await mfaStatus(bed.app, bearer)).toMatchObject({ totp: true })
  })

  it.each(ROLES)('lets a %s disable its TOTP', async (role) => {
    const { member, bearer } = await withTotp({ role })
    expect((await mfaCall(bed.app, bearer, '/totp/disable', { password: member.password })).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, bearer)).toEqual(OFF)
  })

  it("turns off only the caller's TOTP, never that of a user of another academy", async () => {
    const a = await withTotp()
    const b = await withTotp({ loginId: a.member.userLoginId })
    expect((await mfaCall(bed.app, b.bearer, '/totp/disable', { password: b.member.password })).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, b.bearer)).toEqual(OFF)
    expect(await mfaStatus(bed.app, a.bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    expect(await storedRecoveryCodes(bed.owner, a.member.id)).toHaveLength(10)
  })

  it('refuses a malformed body with VALIDATION_FAILED and leaves TOTP on', async () => {
    const { member, bearer } = await withTotp()
    await expectEachInvalid(bearer, '/totp/disable', PASSWORD_BODIES_INVALID(member.password))
    expect(await mfaStatus(bed.app, bearer)).toMatchObject({ totp: true })
  })
})

describe('POST /v1/me/mfa/sms', () => {
  it('makes codes to the verified phone a factor; MFA_ENABLED recorded once however often it is asked', async () => {
    const { tenant, member, bearer } = await signedIn()
    const response = await enableSms(bearer, member)
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: false, sms: true, recoveryCodesLeft: 0 })
    expect(await loginAnswer(bed.app, member, tenant)).toMatchObject({ mfaRequired: true, methods: ['SMS'] })
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expect(await eventsOf(tenant)).toEqual([
      { type: 'MFA_ENABLED', actorId: member.id, targetType: 'USER', targetId: String(member.id), details: { method: 'SMS' } },
    ])
  })

  it('answers PHONE_NOT_VERIFIED for a phone not verified, or none, and enables nothing', async () => {
    for (const options of [{ verified: false }, { phone: null }]) {
      const { tenant, member, bearer } = await signedIn(options)
      expectProblem(await enableSms(bearer, member), 409, 'PHONE_NOT_VERIFIED')
      expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
      expect(await eventsOf(tenant)).toEqual([])
    }
  })

  it('answers AUTH_013 for a wrong password and enables nothing', async () => {
    const { member, bearer } = await signedIn()
    expectProblem(await mfaCall(bed.app, bearer, '/sms', { password: 'Wrong-Password-42' }), 400, 'AUTH_013')
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
  })

  it('answers AUTH_002 without a token', async () => {
    const { member } = await signedIn()
    expectProblem(await mfaCall(bed.app, {}, '/sms', { password: member.password }), 401, 'AUTH_002')
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
  })

  it.each(ROLES)('lets a %s enable SMS', async (role) => {
    const { member, bearer } = await signedIn({ role })
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, bearer)).toMatchObject({ sms: true })
  })

  it('refuses a malformed body with VALIDATION_FAILED and enables nothing', async () => {
    const { member, bearer } = await signedIn()
    await expectEachInvalid(bearer, '/sms', PASSWORD_BODIES_INVALID(member.password))
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
  })
})

describe('POST /v1/me/mfa/sms/disable', () => {
  it('turns off the last factor and deletes its recovery codes; MFA_DISABLED recorded', async () => {
    const { tenant, member, bearer } = await signedIn()
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    const issued = await mfaCall(bed.app, bearer, '/recovery-codes', { password: member.password })
    expect(issued.statusCode).toBe(200)
    expect(await storedRecoveryCodes(bed.owner, member.id)).toHaveLength(10)

    const response = await mfaCall(bed.app, bearer, '/sms/disable', { password: member.password })
    expect(response.statusCode).toBe(204)
    expect(await mfaStatus(bed.app, bearer)).toEqual(OFF)
    expect(await storedRecoveryCodes(bed.owner, member.id)).toEqual([])
    expect(await storedSecondFactors(bed.owner, member.id)).toBeUndefined()
    expect(await loginAnswer(bed.app, member, tenant)).toMatchObject({ user: { id: member.id } })
    expect((await eventsOf(tenant, ['MFA_DISABLED']))).toEqual([
      { type: 'MFA_DISABLED', actorId: member.id, targetType: 'USER', targetId: String(member.id), details: { method: 'SMS', recoveryCodesVoided: true } },
    ])
  })

  it('keeps the recovery codes while TOTP is still on', async () => {
    const { tenant, member, bearer, recoveryCodes } = await withTotp()
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expect((await mfaCall(bed.app, bearer, '/sms/disable', { password: member.password })).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    expect((await eventsOf(tenant, ['MFA_DISABLED']))[0]?.details).toEqual({ method: 'SMS', recoveryCodesVoided: false })
    expect((await signInWithRecoveryCode(member, tenant, recoveryCodes[5]!)).statusCode).toBe(200)
  })

  it('answers 204 and records nothing when SMS was not on', async () => {
    const { tenant, member, bearer } = await signedIn()
    expect((await mfaCall(bed.app, bearer, '/sms/disable', { password: member.password })).statusCode).toBe(204)
    expect(await eventsOf(tenant)).toEqual([])
  })

  it('answers AUTH_013 for a wrong password and leaves SMS on', async () => {
    const { member, bearer } = await signedIn()
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expectProblem(await mfaCall(bed.app, bearer, '/sms/disable', { password: 'Wrong-Password-42' }), 400, 'AUTH_013')
    expect(await mfaStatus(bed.app, bearer)).toMatchObject({ sms: true })
  })

  it('answers AUTH_002 without a token and leaves SMS on', async () => {
    const { member, bearer } = await signedIn()
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expectProblem(await mfaCall(bed.app, {}, '/sms/disable', { password: member.password }), 401, 'AUTH_002')
    expect(await mfaStatus(bed.app, bearer)).toMatchObject({ sms: true })
  })

  it.each(ROLES)('lets a %s disable its SMS factor', async (role) => {
    const { member, bearer } = await signedIn({ role })
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    expect((await mfaCall(bed.app, bearer, '/sms/disable', { password: member.password })).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, bearer)).toEqual(OFF)
  })

  it("turns off only the caller's SMS factor, never that of a user of another academy", async () => {
    const a = await signedIn()
    const b = await signedIn({ loginId: a.member.userLoginId, phone: a.member.phone })
    for (const user of [a, b]) expect((await enableSms(user.bearer, user.member)).statusCode).toBe(204)
    expect((await mfaCall(bed.app, b.bearer, '/sms/disable', { password: b.member.password })).statusCode).toBe(204)
    expect(await mfaStatus(bed.app, b.bearer)).toEqual(OFF)
    expect(await mfaStatus(bed.app, a.bearer)).toEqual({ totp: false, sms: true, recoveryCodesLeft: 0 })
  })

  it('refuses a malformed body with VALIDATION_FAILED and leaves SMS on', async () => {
    const { member, bearer } = await signedIn()
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    await expectEachInvalid(bearer, '/sms/disable', PASSWORD_BODIES_INVALID(member.password))
    expect(await mfaStatus(bed.app, bearer)).toMatchObject({ sms: true })
  })
})

describe('POST /v1/me/mfa/recovery-codes', () => {
  it('answers a new set of ten and voids the old one: an old code then fails at login; RECOVERY_CODES_REGENERATED recorded', async () => {
    const { tenant, member, bearer, recoveryCodes: old } = await withTotp()
    const hashesBefore = await storedRecoveryCodes(bed.owner, member.id)
    const response = await mfaCall(bed.app, bearer, '/recovery-codes', { password: member.password })
    expect(response.statusCode, response.body).toBe(200)
    const { recoveryCodes: fresh } = response.json() as { recoveryCodes: string[] }
    expect(fresh).toHaveLength(10)
    expect(new Set(fresh).size).toBe(10)
    for (const code of fresh) expect(code).toMatch(RECOVERY_CODE)
    expect(fresh.filter((code) => old.includes(code))).toEqual([])

    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    const hashesAfter = await storedRecoveryCodes(bed.owner, member.id)
    expect(hashesAfter).toHaveLength(10)
    expect(hashesAfter.filter((hash) => hashesBefore.includes(hash))).toEqual([])

    expectProblem(await signInWithRecoveryCode(member, tenant, old[0]!), 401, 'MFA_CODE_INVALID')
    expect((await signInWithRecoveryCode(member, tenant, fresh[0]!)).statusCode).toBe(200)
    expect(await eventsOf(tenant, ['RECOVERY_CODES_REGENERATED'])).toEqual([
      { type: 'RECOVERY_CODES_REGENERATED', actorId: member.id, targetType: 'USER', targetId: String(member.id), details: {} },
    ])
  })

  it('shows the MFA events to the academy owner at GET /v1/audit-events', async () => {
    const { tenant, member, bearer } = await withTotp({ role: 'OWNER' })
    expect((await mfaCall(bed.app, bearer, '/recovery-codes', { password: member.password })).statusCode).toBe(200)
    expect((await mfaCall(bed.app, bearer, '/totp/disable', { password: member.password })).statusCode).toBe(204)
    const response = await bed.app.inject({ method: 'GET', url: '/v1/audit-events', headers: bearer })
    expect(response.statusCode, response.body).toBe(200)
    const items = (response.json() as { items: Array<{ type: string; targetId: string; details: object }> }).items
      .filter((item) => ['MFA_ENABLED', 'MFA_DISABLED', 'RECOVERY_CODES_REGENERATED'].includes(item.type))
      .map(({ type, targetId, details }) => ({ type, targetId, details }))
    const target = String(member.id)
    expect(items).toEqual([
      { type: 'MFA_DISABLED', targetId: target, details: { method: 'TOTP', recoveryCodesVoided: true } },
      { type: 'RECOVERY_CODES_REGENERATED', targetId: target, details: {} },
      { type: 'MFA_ENABLED', targetId: target, details: { method: 'TOTP' } },
    ])
    expect(JSON.stringify(await eventsOf(tenant))).not.toMatch(/[a-km-np-z2-9]{5}-[a-km-np-z2-9]{5}/)
  })

  it('issues codes to a user whose only factor is SMS', async () => {
    const { tenant, member, bearer } = await signedIn()
    expect((await enableSms(bearer, member)).statusCode).toBe(204)
    const response = await mfaCall(bed.app, bearer, '/recovery-codes', { password: member.password })
    expect(response.statusCode).toBe(200)
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: false, sms: true, recoveryCodesLeft: 10 })
    expect(await loginAnswer(bed.app, member, tenant)).toMatchObject({ mfaRequired: true, methods: ['SMS', 'RECOVERY_CODE'] })
  })

  it('answers MFA_NOT_ENABLED without a factor, a pending enrolment included, and stores no code', async () => {
    const { tenant, member, bearer } = await signedIn()
    expectProblem(await mfaCall(bed.app, bearer, '/recovery-codes', { password: member.password }), 409, 'MFA_NOT_ENABLED')
    expect((await mfaCall(bed.app, bearer, '/totp', { password: member.password })).statusCode).toBe(200)
    expectProblem(await mfaCall(bed.app, bearer, '/recovery-codes', { password: member.password }), 409, 'MFA_NOT_ENABLED')
    expect(await storedRecoveryCodes(bed.owner, member.id)).toEqual([])
    expect(await eventsOf(tenant)).toEqual([])
  })

  it('answers AUTH_013 for a wrong password and keeps the old set', async () => {
    const { tenant, member, bearer, recoveryCodes } = await withTotp()
    const before = await storedRecoveryCodes(bed.owner, member.id)
    const response = await mfaCall(bed.app, bearer, '/recovery-codes', { password: 'Wrong-Password-42' })
    expectProblem(response, 400, 'AUTH_013')
    expect(response.body).not.toMatch(/[a-km-np-z2-9]{5}-[a-km-np-z2-9]{5}/)
    expect(await storedRecoveryCodes(bed.owner, member.id)).toEqual(before)
    expect(await eventsOf(tenant, ['RECOVERY_CODES_REGENERATED'])).toEqual([])
    expect((await signInWithRecoveryCode(member, tenant, recoveryCodes[0]!)).statusCode).toBe(200)
  })

  it('answers AUTH_002 without a token and keeps the old set', async () => {
    const { member } = await withTotp()
    const before = await storedRecoveryCodes(bed.owner, member.id)
    expectProblem(await mfaCall(bed.app, {}, '/recovery-codes', { password: member.password }), 401, 'AUTH_002')
    expect(await storedRecoveryCodes(bed.owner, member.id)).toEqual(before)
  })

  it.each(ROLES)('lets a %s regenerate its codes', async (role) => {
    const { member, bearer } = await withTotp({ role })
    expect((await mfaCall(bed.app, bearer, '/recovery-codes', { password: member.password })).statusCode).toBe(200)
  })

  it("renews only the caller's codes, never those of a user of another academy", async () => {
    const a = await withTotp()
    const b = await withTotp({ loginId: a.member.userLoginId })
    expect((await mfaCall(bed.app, b.bearer, '/recovery-codes', { password: b.member.password })).statusCode).toBe(200)
    expect((await signInWithRecoveryCode(a.member, a.tenant, a.recoveryCodes[0]!)).statusCode).toBe(200)
    // And a code of one is nothing for the other.
    expectProblem(await signInWithRecoveryCode(b.member, b.tenant, a.recoveryCodes[1]!), 401, 'MFA_CODE_INVALID')
  })

  it('refuses a malformed body with VALIDATION_FAILED and keeps the old set', async () => {
    const { member, bearer } = await withTotp()
    const before = await storedRecoveryCodes(bed.owner, member.id)
    await expectEachInvalid(bearer, '/recovery-codes', PASSWORD_BODIES_INVALID(member.password))
    expect(await storedRecoveryCodes(bed.owner, member.id)).toEqual(before)
  })
})

describe('the sessions of a user who enables TOTP', () => {
  it('replaces the WEB session at the second step of a WEB login, not at its password step, and keeps the MOBILE one', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const credentials = { userLoginId: member.userLoginId, password: member.password, customId: tenant.customId }
    const web = await login(bed.app, credentials, { headers: { 'x-device-category': 'WEB' }, remoteAddress: uniqueAddress() })
    const mobile = await login(bed.app, credentials, { headers: { 'x-device-category': 'MOBILE' }, remoteAddress: uniqueAddress() })
    expect([web.response.statusCode, mobile.response.statusCode]).toEqual([200, 200])
    const { secret } = await enrolTotp(bed.app, web.bearer, member.password)

    const me = (bearer: Bearer) => bed.app.inject({ method: 'GET', url: '/v1/me', headers: bearer })
    const first = await passwordStep(bed.app, member, tenant, { 'x-device-category': 'WEB' })
    expect(first.json()).toMatchObject({ mfaRequired: true })
    expect((await me(web.bearer)).statusCode).toBe(200)

    const code = await freshTotpCode(bed.owner, member.id, secret)
    const second = await secondStep(bed.app, mfaCookieOf(first), 'TOTP', code, { 'x-device-category': 'WEB' })
    expect(second.statusCode, second.body).toBe(200)
    expectProblem(await me(web.bearer), 401, 'AUTH_004')
    expectProblem((await refresh(bed.app, web.refreshToken, { remoteAddress: uniqueAddress() })).response, 401, 'AUTH_017')
    expect((await me(mobile.bearer)).statusCode).toBe(200)

    const sessions = await bed.owner.selectFrom('sessions').select(['sid', 'deviceCategory']).where('userId', '=', member.id).execute()
    expect(sessions.map((session) => session.deviceCategory).sort()).toEqual(['MOBILE', 'WEB'])
    const reasons = await bed.owner.selectFrom('sessionRevocations').select('reason').where('tenantId', '=', tenant.id).execute()
    expect(reasons).toEqual([{ reason: 'SESSION_REPLACED_BY_LOGIN' }])
  })
})

