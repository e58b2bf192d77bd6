import { describe, expect, it } from 'vitest'
import { MFA_COOKIE } from '../../../lib/account-security/second-factor/mfa-token.js'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import { expectProblem } from '../../support/auth-fixtures.js'
import { bearerFor, codeSentTo, createAcademy, insertMember, useRecoveryBed } from '../recovery-bed.js'
import { cookieOf, enrolTotp, mfaCall, mfaCookieOf, passwordStep, secondStep, sendLoginCode } from './mfa-bed.js'

const bed = useRecoveryBed()

async function memberWithTotp() {
  const tenant = await createAcademy(bed.owner)
  const member = await insertMember(bed.owner, tenant, { role: 'OWNER' })
  const bearer = await bearerFor(bed.app, member, tenant, 'OWNER')
  const totp = await enrolTotp(bed.app, bearer, member.password)
  return { tenant, member, bearer, ...totp }
}

describe('POST /v1/login with a second factor, then POST /v1/login/mfa', () => {
  it('answers mfaRequired with the mfa cookie and no session, then opens the session with the TOTP code', async () => {
    const { tenant, member, secret } = await memberWithTotp()
    const first = await passwordStep(bed.app, member, tenant)
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json()).toEqual({ mfaRequired: true, methods: ['TOTP', 'RECOVERY_CODE'], expiresIn: 300 })
    expect(cookieOf(first, 'svc_access_token')).toBeUndefined()
    expect(cookieOf(first, 'svc_refresh_token')).toBeUndefined()
    const mfa = cookieOf(first, MFA_COOKIE)!
    expect(mfa).toMatchObject({ httpOnly: true, secure: true, path: '/v1/login', maxAge: 300 })
    expect(await bed.owner.selectFrom('sessions').select('sid').where('userId', '=', member.id).execute()).toEqual([])

    const second = await secondStep(bed.app, mfa.value, 'TOTP', totpCode(secret, Date.now() + 30_000))
    expect(second.statusCode, second.body).toBe(200)
    expect(second.json()).toMatchObject({ user: { id: member.id, tenantSlug: tenant.slug } })
    expect(cookieOf(second, 'svc_access_token')?.value).toBeTruthy()
    expect(cookieOf(second, MFA_COOKIE)).toMatchObject({ value: '', maxAge: 0, path: '/v1/login' })
    expect(await bed.owner.selectFrom('sessions').select('sid').where('userId', '=', member.id).execute()).toHaveLength(1)

    const again = await secondStep(bed.app, mfa.value, 'RECOVERY_CODE', 'whatever')
    expectProblem(again, 401, 'MFA_TOKEN_INVALID')
  })

  it('signs in with an SMS code sent to the verified phone', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant, { role: 'MANAGER' })
    const bearer = await bearerFor(bed.app, member, tenant, 'MANAGER')
    expect((await mfaCall(bed.app, bearer, '/sms', { password: member.password })).statusCode).toBe(204)
    const first = await passwordStep(bed.app, member, tenant)
    expect(first.json()).toEqual({ mfaRequired: true, methods: ['SMS'], expiresIn: 300 })
    const cookie = mfaCookieOf(first)
    const sent = await sendLoginCode(bed.app, cookie)
    expect(sent.statusCode, sent.body).toBe(202)
    expect(sent.json()).toEqual({ expiresIn: 300, resendAfter: 60 })
    const code = await codeSentTo(bed, member.phone!)
    const second = await secondStep(bed.app, cookie, 'SMS', code)
    expect(second.statusCode, second.body).toBe(200)
  })

  it('signs in with a recovery code, once', async () => {
    const { tenant, member, recoveryCodes } = await memberWithTotp()
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    expect((await secondStep(bed.app, cookie, 'RECOVERY_CODE', recoveryCodes[3]!.toUpperCase())).statusCode).toBe(200)
    const later = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    expectProblem(await secondStep(bed.app, later, 'RECOVERY_CODE', recoveryCodes[3]!), 401, 'MFA_CODE_INVALID')
  })
})
