import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import { expectProblem } from '../../support/auth-fixtures.js'
import { itConcurrent } from '../../support/helper.js'
import { codeSentTo, createAcademy, insertMember, bearerFor, useRecoveryBed } from '../recovery-bed.js'
import {
  enableSms,
  failuresOf,
  holdRows,
  sessionsOf,
  smsMember,
  totpMember,
  untilWaitingForLocks,
  type RowLock,
  type TotpMember,
} from './mfa-attack-bed.js'
import { cookieOf, freshTotpCode, mfaCall, mfaCookieOf, passwordStep, secondStep, sendLoginCode, storedRecoveryCodes, type Response } from './mfa-bed.js'

const bed = useRecoveryBed()

/** The password step of `factor`'s member; its mfa cookie. */
async function stepOne(factor: Pick<TotpMember, 'member' | 'tenant'>): Promise<string> {
  return mfaCookieOf(await passwordStep(bed.app, factor.member, factor.tenant))
}

const statuses = (answers: Response[]) => answers.map((answer) => answer.statusCode).sort()

describe('replaying a code of the second factor', () => {
  it('accepts a TOTP code once: a second login with the same code within its 90 seconds answers MFA_CODE_INVALID', async () => {
    const factor = await totpMember(bed)
    const code = await freshTotpCode(bed.owner, factor.member.id, factor.secret)
    const first = await secondStep(bed.app, await stepOne(factor), 'TOTP', code)
    expect(first.statusCode, first.body).toBe(200)

    const replayed = await stepOne(factor)
    expectProblem(await secondStep(bed.app, replayed, 'TOTP', code), 401, 'MFA_CODE_INVALID')
    expect(await sessionsOf(bed.owner, factor.member.id)).toHaveLength(1)
    expect(await failuresOf(bed.owner, factor.member.id)).toMatchObject({ failures: 1 })
  })

  it('does not sign in with the code that confirmed the enrolment (shown on the screen a moment ago)', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant, { role: 'OWNER' })
    const bearer = await bearerFor(bed.app, member, tenant, 'OWNER')
    const started = await mfaCall(bed.app, bearer, '/totp', { password: member.password })
    const { secret } = started.json() as { secret: string }
    const code = totpCode(secret)
    expect((await mfaCall(bed.app, bearer, '/totp/confirm', { code })).statusCode).toBe(200)

    expectProblem(await secondStep(bed.app, await stepOne({ member, tenant }), 'TOTP', code), 401, 'MFA_CODE_INVALID')
    expect(await sessionsOf(bed.owner, member.id)).toEqual([])
  })

  it("refuses an older step's code once a newer step signed in", async () => {
    const factor = await totpMember(bed)
    await freshTotpCode(bed.owner, factor.member.id, factor.secret)
    const now = Date.now()
    const newer = await secondStep(bed.app, await stepOne(factor), 'TOTP', totpCode(factor.secret, now + 30_000))
    expect(newer.statusCode, newer.body).toBe(200)
    expectProblem(await secondStep(bed.app, await stepOne(factor), 'TOTP', totpCode(factor.secret, now)), 401, 'MFA_CODE_INVALID')
  })

  it('accepts a recovery code once, however it is typed the second time', async () => {
    const factor = await totpMember(bed)
    const [code] = factor.recoveryCodes
    expect((await secondStep(bed.app, await stepOne(factor), 'RECOVERY_CODE', code!)).statusCode).toBe(200)
    for (const typed of [code!, code!.toUpperCase(), code!.replace('-', ''), ` ${code!.replace('-', ' ')} `]) {
      expectProblem(await secondStep(bed.app, await stepOne(factor), 'RECOVERY_CODE', typed), 401, 'MFA_CODE_INVALID')
    }
    const status = await bed.app.inject({ method: 'GET', url: '/v1/me/mfa', headers: factor.bearer })
    expect(status.json()).toMatchObject({ recoveryCodesLeft: 9 })
    expect(await sessionsOf(bed.owner, factor.member.id)).toHaveLength(1)
  })

  it('refuses the used token with the next valid code: MFA_TOKEN_INVALID, and no second session', async () => {
    const factor = await totpMember(bed)
    const cookie = await stepOne(factor)
    expect((await secondStep(bed.app, cookie, 'RECOVERY_CODE', factor.recoveryCodes[0]!)).statusCode).toBe(200)
    expectProblem(await secondStep(bed.app, cookie, 'RECOVERY_CODE', factor.recoveryCodes[1]!), 401, 'MFA_TOKEN_INVALID')
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, factor.member.id, factor.secret)), 401, 'MFA_TOKEN_INVALID')
    expectProblem(await sendLoginCode(bed.app, cookie), 401, 'MFA_TOKEN_INVALID')
    expect(await sessionsOf(bed.owner, factor.member.id)).toHaveLength(1)
    expect(await storedRecoveryCodes(bed.owner, factor.member.id)).toHaveLength(9)
  })
})

describe('racing second steps', () => {
  /**
   * Sends `requests` at once while the owner holds the rows `lock` takes, waits until `waiting` of them wait for a
   * row lock (so every one is past its admission and inside its transaction), then lets them go.
   */
  async function race(lock: RowLock, waiting: number, requests: (() => Promise<Response>)[]) {
    const holder = await holdRows(bed.owner, lock)
    const answers = Promise.all(requests.map((request) => request()))
    try {
      await untilWaitingForLocks(bed.owner, waiting)
    } finally {
      await holder.release()
    }
    return answers
  }

  // The rows a second step locks after its challenge: the factor row (a TOTP check), the recovery codes (taking one).
  const factorRow = (factor: TotpMember): RowLock => (trx) =>
    trx.selectFrom('userSecondFactors').select('userId').where('userId', '=', factor.member.id).forUpdate().execute()
  const recoveryRows = (factor: TotpMember): RowLock => (trx) =>
    trx.selectFrom('userRecoveryCodes').select('userId').where('userId', '=', factor.member.id).forUpdate().execute()

  itConcurrent('gives exactly one 200 to two second steps with one token and one valid TOTP code', async () => {
    const factor = await totpMember(bed)
    const cookie = await stepOne(factor)
    const code = await freshTotpCode(bed.owner, factor.member.id, factor.secret)
    const answers = await race(factorRow(factor), 2, [() => secondStep(bed.app, cookie, 'TOTP', code), () => secondStep(bed.app, cookie, 'TOTP', code)])
    expect(statuses(answers)).toEqual([200, 401])
    // Refused for its token, not only for its code: the second waits on the challenge and finds it used up.
    expectProblem(answers.find((answer) => answer.statusCode === 401)!, 401, 'MFA_TOKEN_INVALID')
    expect(await sessionsOf(bed.owner, factor.member.id)).toHaveLength(1)
  })

  itConcurrent('opens one session for one token, even with two different valid recovery codes at once', async () => {
    const factor = await totpMember(bed)
    const cookie = await stepOne(factor)
    const [first, second] = factor.recoveryCodes
    const answers = await race(recoveryRows(factor), 2, [
      () => secondStep(bed.app, cookie, 'RECOVERY_CODE', first!),
      () => secondStep(bed.app, cookie, 'RECOVERY_CODE', second!),
    ])
    expect(statuses(answers)).toEqual([200, 401])
    expectProblem(answers.find((answer) => answer.statusCode === 401)!, 401, 'MFA_TOKEN_INVALID')
    expect(await sessionsOf(bed.owner, factor.member.id)).toHaveLength(1)
    // The refused attempt spent no code: only the one that signed in is gone.
    expect(await storedRecoveryCodes(bed.owner, factor.member.id)).toHaveLength(9)
  })

  itConcurrent('gives exactly one 200 to two logins (two tokens) racing with one TOTP code', async () => {
    const factor = await totpMember(bed)
    const [one, two] = [await stepOne(factor), await stepOne(factor)]
    const code = await freshTotpCode(bed.owner, factor.member.id, factor.secret)
    const answers = await race(factorRow(factor), 2, [() => secondStep(bed.app, one, 'TOTP', code), () => secondStep(bed.app, two, 'TOTP', code)])
    expect(statuses(answers)).toEqual([200, 401])
    expectProblem(answers.find((answer) => answer.statusCode === 401)!, 401, 'MFA_CODE_INVALID')
    expect(await sessionsOf(bed.owner, factor.member.id)).toHaveLength(1)
  })

  itConcurrent('gives exactly one 200 to two logins (two tokens) racing with one recovery code', async () => {
    const factor = await totpMember(bed)
    const [one, two] = [await stepOne(factor), await stepOne(factor)]
    const code = factor.recoveryCodes[5]!
    const answers = await race(recoveryRows(factor), 2, [
      () => secondStep(bed.app, one, 'RECOVERY_CODE', code),
      () => secondStep(bed.app, two, 'RECOVERY_CODE', code),
    ])
    expect(statuses(answers)).toEqual([200, 401])
    expectProblem(answers.find((answer) => answer.statusCode === 401)!, 401, 'MFA_CODE_INVALID')
    expect(await sessionsOf(bed.owner, factor.member.id)).toHaveLength(1)
  })
})

describe("one login's mfa token used for another", () => {
  it("does not sign in as B (nor as A) with A's token and B's valid TOTP code", async () => {
    const tenant = await createAcademy(bed.owner)
    const a = await totpMember(bed, { tenant })
    const b = await totpMember(bed, { tenant })
    // B is between the two steps too: a live challenge of B's exists in the same academy.
    const bCookie = await stepOne(b)
    const aCookie = await stepOne(a)
    const bCode = await freshTotpCode(bed.owner, b.member.id, b.secret)

    expectProblem(await secondStep(bed.app, aCookie, 'TOTP', bCode), 401, 'MFA_CODE_INVALID')
    expectProblem(await secondStep(bed.app, aCookie, 'RECOVERY_CODE', b.recoveryCodes[0]!), 401, 'MFA_CODE_INVALID')
    expect(await sessionsOf(bed.owner, a.member.id)).toEqual([])
    expect(await sessionsOf(bed.owner, b.member.id)).toEqual([])
    // Counted against A, whose login it was; B's code and recovery code were spent on nothing.
    expect(await failuresOf(bed.owner, a.member.id)).toMatchObject({ failures: 2 })
    expect(await storedRecoveryCodes(bed.owner, b.member.id)).toHaveLength(10)
    const signedIn = await secondStep(bed.app, bCookie, 'TOTP', bCode)
    expect(signedIn.statusCode, signedIn.body).toBe(200)
    expect(signedIn.json()).toMatchObject({ user: { id: b.member.id } })
  })

  it('answers MFA_TOKEN_INVALID to a token whose tenant part names another academy, and counts nothing', async () => {
    const a = await totpMember(bed)
    const b = await totpMember(bed)
    await stepOne(b)
    const aCookie = await stepOne(a)
    const [tenantPart, random] = aCookie.split('.')
    expect(Number(tenantPart)).toBe(a.tenant.id)
    const moved = `${b.tenant.id}.${random}`
    expectProblem(await secondStep(bed.app, moved, 'TOTP', await freshTotpCode(bed.owner, b.member.id, b.secret)), 401, 'MFA_TOKEN_INVALID')
    expectProblem(await secondStep(bed.app, moved, 'TOTP', await freshTotpCode(bed.owner, a.member.id, a.secret)), 401, 'MFA_TOKEN_INVALID')
    expectProblem(await sendLoginCode(bed.app, moved), 401, 'MFA_TOKEN_INVALID')
    expect(await sessionsOf(bed.owner, a.member.id)).toEqual([])
    expect(await sessionsOf(bed.owner, b.member.id)).toEqual([])
    // The real token still works: the forged one neither used it up nor counted as A's failure.
    expect(await failuresOf(bed.owner, a.member.id)).toMatchObject({ failures: 0 })
    expect((await secondStep(bed.app, aCookie, 'TOTP', await freshTotpCode(bed.owner, a.member.id, a.secret))).statusCode).toBe(200)
  })

  it('answers MFA_TOKEN_INVALID to a missing, random or malformed cookie, on both second-step routes', async () => {
    const factor = await totpMember(bed)
    const live = await stepOne(factor)
    const [tenantPart, random] = live.split('.')
    const forged = [
      undefined,
      '',
      'garbage',
      `${tenantPart}.${randomBytes(32).toString('base64url')}`,
      `${tenantPart}.${random!.slice(0, -1)}${random!.endsWith('A') ? 'B' : 'A'}`,
      `${tenantPart}.${random}.${random}`,
      `${tenantPart}.${random}x`,
      `0${tenantPart}.${random}`,
      `-${tenantPart}.${random}`,
      `${tenantPart}`,
      `.${random}`,
      `9007199254740993.${random}`,
      `999999999999999999.${random}`,
      `${tenantPart}.${random}' or '1'='1`,
      live.toUpperCase(),
    ]
    const code = await freshTotpCode(bed.owner, factor.member.id, factor.secret)
    for (const cookie of forged) {
      expectProblem(await secondStep(bed.app, cookie, 'TOTP', code), 401, 'MFA_TOKEN_INVALID')
      expectProblem(await sendLoginCode(bed.app, cookie), 401, 'MFA_TOKEN_INVALID')
    }
    expect(await sessionsOf(bed.owner, factor.member.id)).toEqual([])
    expect((await secondStep(bed.app, live, 'TOTP', code)).statusCode).toBe(200)
  })

  it('answers MFA_TOKEN_INVALID once the challenge has expired, even with the right code', async () => {
    const factor = await totpMember(bed)
    await enableSms(bed.app, factor)
    const cookie = await stepOne(factor)
    await bed.owner
      .updateTable('mfaChallenges')
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where('userId', '=', factor.member.id)
      .execute()
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', await freshTotpCode(bed.owner, factor.member.id, factor.secret)), 401, 'MFA_TOKEN_INVALID')
    expectProblem(await secondStep(bed.app, cookie, 'RECOVERY_CODE', factor.recoveryCodes[0]!), 401, 'MFA_TOKEN_INVALID')
    expectProblem(await sendLoginCode(bed.app, cookie), 401, 'MFA_TOKEN_INVALID')
    expect(await sessionsOf(bed.owner, factor.member.id)).toEqual([])
    expect(await storedRecoveryCodes(bed.owner, factor.member.id)).toHaveLength(10)
  })
})

describe('a pending TOTP enrolment', () => {
  it('does not turn on the second step: the login answers tokens directly', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant, { role: 'OWNER' })
    const bearer = await bearerFor(bed.app, member, tenant, 'OWNER')
    expect((await mfaCall(bed.app, bearer, '/totp', { password: member.password })).statusCode).toBe(200)

    const login = await passwordStep(bed.app, member, tenant)
    expect(login.statusCode, login.body).toBe(200)
    expect(login.json()).not.toHaveProperty('mfaRequired')
    expect(login.json()).toMatchObject({ user: { id: member.id } })
    expect(cookieOf(login, 'svc_access_token')?.value).toBeTruthy()
    expect(cookieOf(login, 'svc_mfa_token')).toBeUndefined()
  })

  it("is no factor at the second step: the pending secret's code answers MFA_CODE_INVALID for an SMS user", async () => {
    const factor = await smsMember(bed)
    const started = await mfaCall(bed.app, factor.bearer, '/totp', { password: factor.member.password })
    const { secret: pending } = started.json() as { secret: string }

    const step = await passwordStep(bed.app, factor.member, factor.tenant)
    expect(step.json()).toMatchObject({ mfaRequired: true, methods: ['SMS'] })
    const cookie = mfaCookieOf(step)
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', totpCode(pending)), 401, 'MFA_CODE_INVALID')
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', totpCode(pending, Date.now() + 30_000)), 401, 'MFA_CODE_INVALID')
    expect(await sessionsOf(bed.owner, factor.member.id)).toEqual([])
    expect(await failuresOf(bed.owner, factor.member.id)).toMatchObject({ failures: 2 })

    expect((await sendLoginCode(bed.app, cookie)).statusCode).toBe(202)
    expect((await secondStep(bed.app, cookie, 'SMS', await codeSentTo(bed, factor.member.phone!))).statusCode).toBe(200)
  })

  it("of a new phone does not pass while the enabled app's code does", async () => {
    const factor = await totpMember(bed)
    const started = await mfaCall(bed.app, factor.bearer, '/totp', { password: factor.member.password })
    const { secret: pending } = started.json() as { secret: string }
    const cookie = await stepOne(factor)
    await freshTotpCode(bed.owner, factor.member.id, factor.secret)
    expectProblem(await secondStep(bed.app, cookie, 'TOTP', totpCode(pending)), 401, 'MFA_CODE_INVALID')
    expect((await secondStep(bed.app, cookie, 'TOTP', totpCode(factor.secret))).statusCode).toBe(200)
  })
})
