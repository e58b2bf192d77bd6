import { describe, expect, it } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import { codeSentTo, otherCode, useRecoveryBed } from '../recovery-bed.js'
import {
  enableSms,
  expectLocked,
  failuresOf,
  NOBODYS_RECOVERY_CODE,
  sessionsOf,
  totpMember,
  type TotpMember,
} from './mfa-attack-bed.js'
import { freshTotpCode, mfaCall, mfaCookieOf, notTheTotpCode, passwordStep, secondStep, sendLoginCode, storedRecoveryCodes, storedSecondFactors } from './mfa-bed.js'

// The defaults: SVC_LOGIN_MAX_FAILURES=5, so the fifth failure starts the lock.
const bed = useRecoveryBed()
const MAX_FAILURES = 5

type Method = 'TOTP' | 'SMS' | 'RECOVERY_CODE'

/** A member with TOTP and SMS, so that all three methods are offered at the second step. */
async function everyMethodMember(): Promise<TotpMember> {
  const factor = await totpMember(bed)
  await enableSms(bed.app, factor)
  return factor
}

/** A wrong code of `method`; for SMS a real code is sent (once: resends wait a minute), and shifted by one. */
async function wrongCode(factor: TotpMember, cookie: string, method: Method): Promise<string> {
  if (method === 'TOTP') return notTheTotpCode(factor.secret)
  if (method === 'RECOVERY_CODE') return NOBODYS_RECOVERY_CODE
  expect((await sendLoginCode(bed.app, cookie)).statusCode).toBe(202)
  return otherCode(await codeSentTo(bed, factor.member.phone!))
}

async function guessWrong(factor: TotpMember, cookie: string, method: Method, times: number): Promise<void> {
  const code = await wrongCode(factor, cookie, method)
  for (let attempt = 0; attempt < times; attempt++) {
    expectProblem(await secondStep(bed.app, cookie, method, code), 401, 'MFA_CODE_INVALID')
  }
}

describe('guessing second-factor codes is counted in the lockout of the identity', () => {
  it(`answers the ${MAX_FAILURES + 1}th second step 429 AUTH_018 after ${MAX_FAILURES} wrong codes, even with the right code`, async () => {
    const factor = await totpMember(bed)
    const { tenant, member, secret } = factor
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    await guessWrong(factor, cookie, 'TOTP', MAX_FAILURES)

    expectLocked(await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, member.id, secret)))
    expectLocked(await secondStep(bed.app, cookie, 'RECOVERY_CODE', factor.recoveryCodes[0]!))
    // The password alone does not reopen the door either, and nothing signed in.
    expectLocked(await passwordStep(bed.app, member, tenant))
    expect(await sessionsOf(bed.owner, member.id)).toEqual([])
    expect(await storedRecoveryCodes(bed.owner, member.id)).toHaveLength(10)
    expect(await failuresOf(bed.owner, member.id)).toMatchObject({ failures: MAX_FAILURES, lockedUntil: expect.any(Date) })
    const events = await bed.owner.selectFrom('auditEvents').select(['type', 'details']).where('tenantId', '=', tenant.id).orderBy('id').execute()
    expect(events.filter((event) => event.type === 'LOGIN_FAILED').map((event) => event.details)).toEqual(
      Array.from({ length: MAX_FAILURES }, () => expect.objectContaining({ reason: 'WRONG_SECOND_FACTOR' })),
    )
    expect(events.filter((event) => event.type === 'LOGIN_LOCKED')).toHaveLength(1)
  })

  it('does not forgive guessed codes when the password step is taken again in between', async () => {
    const factor = await totpMember(bed)
    const { tenant, member, secret } = factor
    const first = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    await guessWrong(factor, first, 'TOTP', MAX_FAILURES - 1)

    // A fresh password step (a new token) answers as usual, but the count of guesses stays.
    const again = await passwordStep(bed.app, member, tenant)
    expect(again.statusCode, again.body).toBe(200)
    expect(again.json()).toMatchObject({ mfaRequired: true })
    const second = mfaCookieOf(again)
    expect(await failuresOf(bed.owner, member.id)).toMatchObject({ failures: MAX_FAILURES - 1, lockedUntil: null })

    await guessWrong(factor, second, 'TOTP', 1)
    expectLocked(await secondStep(bed.app, second, 'TOTP', await freshTotpCode(bed.owner, member.id, secret)))
    expectLocked(await secondStep(bed.app, first, 'TOTP', await freshTotpCode(bed.owner, member.id, secret)))
    expectLocked(await passwordStep(bed.app, member, tenant))
    expect(await sessionsOf(bed.owner, member.id)).toEqual([])
  })

  it('keeps counting across many password steps: one guess after each never resets the count', async () => {
    const factor = await totpMember(bed)
    const { tenant, member, secret } = factor
    let cookie = ''
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
      await guessWrong(factor, cookie, 'TOTP', 1)
    }
    expectLocked(await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, member.id, secret)))
    expectLocked(await passwordStep(bed.app, member, tenant))
  })

  it.each<Method>(['TOTP', 'SMS', 'RECOVERY_CODE'])('counts wrong %s codes toward the lockout', async (method) => {
    const factor = await everyMethodMember()
    const { tenant, member, secret } = factor
    const step = await passwordStep(bed.app, member, tenant)
    expect(step.json()).toMatchObject({ methods: ['TOTP', 'SMS', 'RECOVERY_CODE'] })
    const cookie = mfaCookieOf(step)
    await guessWrong(factor, cookie, method, MAX_FAILURES)
    expectLocked(await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, member.id, secret)))
    expect(await sessionsOf(bed.owner, member.id)).toEqual([])
  })

  it('counts guesses spread over the three methods as one count', async () => {
    const factor = await everyMethodMember()
    const { tenant, member, secret } = factor
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    await guessWrong(factor, cookie, 'TOTP', 2)
    await guessWrong(factor, cookie, 'SMS', 2)
    await guessWrong(factor, cookie, 'RECOVERY_CODE', 1)
    expectLocked(await secondStep(bed.app, cookie, 'RECOVERY_CODE', factor.recoveryCodes[0]!))
    expectLocked(await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, member.id, secret)))
  })

  it('still signs in after fewer wrong codes than the limit, and the right code forgives them', async () => {
    const factor = await totpMember(bed)
    const { tenant, member, secret } = factor
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    await guessWrong(factor, cookie, 'TOTP', MAX_FAILURES - 1)
    const signedIn = await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, member.id, secret))
    expect(signedIn.statusCode, signedIn.body).toBe(200)
    expect(await failuresOf(bed.owner, member.id)).toBeUndefined()
  })
})

/** Every POST under /v1/me/mfa that changes a factor, and so takes the current password. */
const PROVEN_ROUTES = ['/totp', '/totp/disable', '/sms', '/sms/disable', '/recovery-codes'] as const

describe('changing or disabling a factor without the password', () => {
  /** What an attacker holding only the session would like to change: the answer of GET /v1/me/mfa and the rows. */
  async function factorState(factor: TotpMember) {
    const status = await bed.app.inject({ method: 'GET', url: '/v1/me/mfa', headers: factor.bearer })
    expect(status.statusCode, status.body).toBe(200)
    return {
      status: status.json(),
      row: await storedSecondFactors(bed.owner, factor.member.id),
      recoveryCodes: await storedRecoveryCodes(bed.owner, factor.member.id),
    }
  }

  it('answers each change with a wrong password 400 AUTH_013 and changes nothing; the failures lock the sign-in', async () => {
    const factor = await everyMethodMember()
    const before = await factorState(factor)
    expect(before.status).toEqual({ totp: true, sms: true, recoveryCodesLeft: 10 })

    for (const path of PROVEN_ROUTES) {
      const answer = await mfaCall(bed.app, factor.bearer, path, { password: `${factor.member.password}x` })
      expectProblem(answer, 400, 'AUTH_013')
      expect(await factorState(factor), path).toEqual(before)
    }
    // Five routes, five wrong passwords: the default limit, so the sign-in is locked as after five wrong logins.
    expect(PROVEN_ROUTES).toHaveLength(MAX_FAILURES)
    expect(await failuresOf(bed.owner, factor.member.id)).toMatchObject({ failures: MAX_FAILURES, lockedUntil: expect.any(Date) })
    expectLocked(await passwordStep(bed.app, factor.member, factor.tenant))
    // Locked, even the right password changes nothing.
    expectLocked(await mfaCall(bed.app, factor.bearer, '/totp/disable', { password: factor.member.password }))
    expect(await factorState(factor)).toEqual(before)
  })

  it('locks the sign-in after five wrong passwords on one route', async () => {
    const factor = await totpMember(bed)
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      expectProblem(await mfaCall(bed.app, factor.bearer, '/totp/disable', { password: `wrong-${attempt}` }), 400, 'AUTH_013')
    }
    expectLocked(await passwordStep(bed.app, factor.member, factor.tenant))
    expect((await storedSecondFactors(bed.owner, factor.member.id))?.totpEnabledAt).toBeInstanceOf(Date)
  })

  it('answers each change without a password field 400 VALIDATION_FAILED, changing and counting nothing', async () => {
    const factor = await everyMethodMember()
    const before = await factorState(factor)
    for (const path of PROVEN_ROUTES) {
      expectProblem(await mfaCall(bed.app, factor.bearer, path, {}), 400, 'VALIDATION_FAILED')
      expectProblem(await mfaCall(bed.app, factor.bearer, path, { currentPassword: factor.member.password }), 400, 'VALIDATION_FAILED')
      expect(await factorState(factor), path).toEqual(before)
    }
    expect(await failuresOf(bed.owner, factor.member.id)).toBeUndefined()
  })
})
