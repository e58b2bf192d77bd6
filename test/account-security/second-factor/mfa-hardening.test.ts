import { describe, expect, it } from 'vitest'
import { replaceCode } from '../../../db/repos/account-security/one-time-codes.js'
import { withTenant } from '../../../db/tenant-transaction.js'
import { hashCode, type CodeBinding } from '../../../lib/account-security/codes/codes.js'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import { expectProblem, strongPassword } from '../../support/auth-fixtures.js'
import { bearerFor, createAcademy, insertMember, useRecoveryBed } from '../recovery-bed.js'
import { enrolTotp, mfaCall, mfaCookieOf, mfaStatus, notTheTotpCode, passwordStep, secondStep, storedSecondFactors } from './mfa-bed.js'

const bed = useRecoveryBed()

async function signedInMember() {
  const tenant = await createAcademy(bed.owner)
  const member = await insertMember(bed.owner, tenant, { role: 'OWNER' })
  return { tenant, member, bearer: await bearerFor(bed.app, member, tenant, 'OWNER') }
}

/** A member with TOTP whose password step is done: the attacker who knew the password holds `cookie`. */
async function halfSignedIn() {
  const { tenant, member, bearer } = await signedInMember()
  const { secret, recoveryCodes } = await enrolTotp(bed.app, bearer, member.password)
  const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
  return { tenant, member, bearer, recoveryCodes, cookie, nextCode: () => totpCode(secret, Date.now() + 30_000) }
}

describe('a second step waiting on a password that has changed since', () => {
  it('dies with a password change', async () => {
    const { member, bearer, cookie, nextCode } = await halfSignedIn()
    const changed = await bed.app.inject({
      method: 'POST',
      url: '/v1/me/password',
      headers: bearer,
      payload: { currentPassword: member.password, newPassword: strongPassword() },
    })
    expect(changed.statusCode, changed.body).toBe(204)
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', nextCode()), 401, 'MFA_TOKEN_INVALID')
  })

  it('dies with a self-service reset', async () => {
    const { tenant, member, cookie, nextCode, recoveryCodes } = await halfSignedIn()
    const binding: CodeBinding = { tenantId: tenant.id, userId: member.id, purpose: 'PASSWORD_RESET', phone: member.phone! }
    const { key, ttlSeconds, resendSeconds } = bed.app.oneTimeCodes.codes
    await withTenant(bed.app.db, tenant.id, (trx) => replaceCode(trx, { ...binding, codeHash: hashCode(key, binding, '042917'), ttlSeconds, resendSeconds }))
    const reset = await bed.app.inject({
      method: 'POST',
      url: '/v1/password/reset',
      payload: {
        userLoginId: member.userLoginId,
        customId: tenant.customId,
        code: '042917',
        newPassword: strongPassword(),
        secondFactor: { method: 'RECOVERY_CODE', code: recoveryCodes[0] },
      },
    })
    expect(reset.statusCode, reset.body).toBe(204)
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', nextCode()), 401, 'MFA_TOKEN_INVALID')
  })

  it('dies with the in-process resetPassword', async () => {
    const { tenant, member, cookie, nextCode } = await halfSignedIn()
    await bed.app.authContract.forTenant(tenant.id).resetPassword(member.id)
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', nextCode()), 401, 'MFA_TOKEN_INVALID')
  })

  it('lives on while the password stays (a changed name, a verified phone)', async () => {
    const { bearer, cookie, nextCode } = await halfSignedIn()
    const renamed = await bed.app.inject({ method: 'PATCH', url: '/v1/me', headers: bearer, payload: { name: 'Renamed' } })
    expect(renamed.statusCode, renamed.body).toBe(200)
    expect((await secondStep(bed.app, cookie, 'TOTP', nextCode())).statusCode).toBe(200)
  })
})

describe('POST /v1/me/mfa/totp/confirm against guessing', () => {
  it('counts every wrong code, committed though refused, and discards the pending secret at SVC_OTP_MAX_ATTEMPTS', async () => {
    const { member, bearer } = await signedInMember()
    const started = await mfaCall(bed.app, bearer, '/totp', { password: member.password })
    const { secret } = started.json() as { secret: string }
    const maxAttempts = bed.app.env.SVC_OTP_MAX_ATTEMPTS
    for (let attempt = 1; attempt < maxAttempts; attempt++) {
      expectProblem(await mfaCall(bed.app, bearer, '/totp/confirm', { code: notTheTotpCode(secret) }), 400, 'OTP_INVALID')
    }
    const attempts = await bed.owner.selectFrom('userSecondFactors').select('totpPendingAttempts').where('userId', '=', member.id).executeTakeFirst()
    expect(attempts).toEqual({ totpPendingAttempts: maxAttempts - 1 })
    expect((await storedSecondFactors(bed.owner, member.id))?.totpPendingSecret).toBeTruthy()

    expectProblem(await mfaCall(bed.app, bearer, '/totp/confirm', { code: notTheTotpCode(secret) }), 400, 'OTP_INVALID')
    expect((await storedSecondFactors(bed.owner, member.id))?.totpPendingSecret).toBeNull()
    // Even the right code now enables nothing and issues no recovery codes.
    expectProblem(await mfaCall(bed.app, bearer, '/totp/confirm', { code: totpCode(secret) }), 400, 'OTP_INVALID')
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: false, sms: false, recoveryCodesLeft: 0 })
  })

  it('starts the count afresh with a new enrolment, which confirms', async () => {
    const { member, bearer } = await signedInMember()
    const first = (await mfaCall(bed.app, bearer, '/totp', { password: member.password })).json() as { secret: string }
    for (let attempt = 0; attempt < bed.app.env.SVC_OTP_MAX_ATTEMPTS; attempt++) {
      await mfaCall(bed.app, bearer, '/totp/confirm', { code: notTheTotpCode(first.secret) })
    }
    const { recoveryCodes } = await enrolTotp(bed.app, bearer, member.password)
    expect(recoveryCodes).toHaveLength(10)
    expect(await mfaStatus(bed.app, bearer)).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
  })
})

describe('svc_auth_logins_total over the two steps', () => {
  const series = async () => {
    const text = (await bed.app.inject({ method: 'GET', url: '/metrics' })).body
    const value = (outcome: string) => Number(/\s(\S+)$/.exec(text.split('\n').find((line) => line.startsWith(`svc_auth_logins_total{outcome="${outcome}"} `)) ?? ' 0')![1])
    return { ok: value('ok'), secondStep: value('second_step'), invalid: value('invalid') }
  }

  it('counts a right password of a user with a factor as second_step, a wrong code as invalid, the session as ok', async () => {
    const { member, tenant, bearer } = await signedInMember()
    const { secret } = await enrolTotp(bed.app, bearer, member.password)
    const before = await series()
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    await secondStep(bed.app, cookie, 'TOTP', notTheTotpCode(secret))
    expect((await secondStep(bed.app, cookie, 'TOTP', totpCode(secret, Date.now() + 30_000))).statusCode).toBe(200)
    const after = await series()
    expect({ ok: after.ok - before.ok, secondStep: after.secondStep - before.secondStep, invalid: after.invalid - before.invalid })
      .toEqual({ ok: 1, secondStep: 1, invalid: 1 })
  })
})
