import { Secret } from 'otpauth'
import { describe, expect, it } from 'vitest'
import { MFA_COOKIE } from '../../../lib/account-security/second-factor/mfa-token.js'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import { expectProblem } from '../../support/auth-fixtures.js'
import { createAcademy, insertMember, sentTo, useRecoveryBed } from '../recovery-bed.js'
import {
  accessCookie,
  failuresOf,
  NOBODYS_RECOVERY_CODE,
  sessionsOf,
  smsMember,
  totpMember,
  type TotpMember,
} from './mfa-attack-bed.js'
import { cookieOf, enrolTotp, freshTotpCode, mfaCall, mfaCookieOf, notTheTotpCode, passwordStep, secondStep, sendLoginCode, storedRecoveryCodes, storedSecondFactors } from './mfa-bed.js'

const bed = useRecoveryBed()

const EVIL = 'https://evil.example'
/** The service's own origin as `inject` reaches it (http, Host localhost). */
const OWN = 'http://localhost'
const CROSS_SITE: Record<string, string>[] = [{ origin: EVIL }, { 'sec-fetch-site': 'cross-site' }]

const me = (headers: Record<string, string>, cookies: Record<string, string> = {}) =>
  bed.app.inject({ method: 'GET', url: '/v1/me', headers, cookies })

describe('skipping the second step', () => {
  it('gets nothing from the password step that opens a session: no token cookie, and the mfa cookie is no token', async () => {
    const factor = await totpMember(bed)
    const step = await passwordStep(bed.app, factor.member, factor.tenant)
    expect(step.json()).toMatchObject({ mfaRequired: true })
    expect(step.cookies.map((cookie) => cookie.name)).toEqual([MFA_COOKIE])
    expect(step.body).not.toContain(mfaCookieOf(step))

    for (const { value } of step.cookies) {
      expectProblem(await me({}, { svc_access_token: value }), 401, 'AUTH_003')
      expectProblem(await me({ authorization: `Bearer ${value}` }), 401, 'AUTH_003')
      expectProblem(await me({}, { [MFA_COOKIE]: value }), 401, 'AUTH_002')
      const disable = await bed.app.inject({
        method: 'POST',
        url: '/v1/me/mfa/totp/disable',
        headers: { authorization: `Bearer ${value}` },
        payload: { password: factor.member.password },
      })
      expectProblem(disable, 401, 'AUTH_003')
      const refreshed = await bed.app.inject({ method: 'POST', url: '/v1/refresh', cookies: { svc_refresh_token: value } })
      expectProblem(refreshed, 401, 'AUTH_006')
    }
    expect(await sessionsOf(bed.owner, factor.member.id)).toEqual([])
    expect((await storedSecondFactors(bed.owner, factor.member.id))?.totpEnabledAt).toBeInstanceOf(Date)
  })

  it('leaves the earlier session of the same device category alive after the password step; the second step replaces it', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant, { role: 'OWNER' })
    const mobile = { 'x-device-category': 'MOBILE' }
    const earlierLogin = await passwordStep(bed.app, member, tenant, mobile)
    expect(earlierLogin.statusCode, earlierLogin.body).toBe(200)
    const earlier = { authorization: `Bearer ${cookieOf(earlierLogin, 'svc_access_token')!.value}` }
    const [earlierSession] = await sessionsOf(bed.owner, member.id)
    expect(earlierSession).toMatchObject({ deviceCategory: 'MOBILE' })
    const { secret } = await enrolTotp(bed.app, earlier, member.password)
    const revocations = () => bed.owner.selectFrom('sessionRevocations').select(['sid', 'reason']).where('tenantId', '=', tenant.id).execute()

    const step = await passwordStep(bed.app, member, tenant, mobile)
    expect(step.json()).toMatchObject({ mfaRequired: true })
    expect((await me(earlier)).statusCode).toBe(200)
    expect(await sessionsOf(bed.owner, member.id)).toEqual([earlierSession])
    expect(await revocations()).toEqual([])

    // A wrong code changes nothing either.
    expectProblem(await secondStep(bed.app, mfaCookieOf(step), 'TOTP', notTheTotpCode(secret), mobile), 401, 'MFA_CODE_INVALID')
    expect((await me(earlier)).statusCode).toBe(200)

    const second = await secondStep(bed.app, mfaCookieOf(step), 'TOTP', await freshTotpCode(bed.owner, member.id, secret), mobile)
    expect(second.statusCode, second.body).toBe(200)
    expect((await me(earlier)).statusCode).toBe(401)
    const sessions = await sessionsOf(bed.owner, member.id)
    expect(sessions).toEqual([{ sid: expect.any(String), deviceCategory: 'MOBILE' }])
    expect(sessions[0]!.sid).not.toBe(earlierSession!.sid)
    expect(await revocations()).toEqual([{ sid: earlierSession!.sid, reason: 'SESSION_REPLACED_BY_LOGIN' }])
  })
})

describe('cross-site requests to the second factor routes (CSRF)', () => {
  it('refuses POST /v1/login/mfa with the mfa cookie from another site, before the code is looked at', async () => {
    const factor = await totpMember(bed)
    const cookie = mfaCookieOf(await passwordStep(bed.app, factor.member, factor.tenant))
    for (const headers of CROSS_SITE) {
      const code = await freshTotpCode(bed.owner, factor.member.id, factor.secret)
      expectProblem(await secondStep(bed.app, cookie, 'TOTP', code, headers), 403, 'CSRF_ORIGIN_REJECTED')
    }
    expect(await sessionsOf(bed.owner, factor.member.id)).toEqual([])
    expect(await failuresOf(bed.owner, factor.member.id)).toMatchObject({ failures: 0 })

    const code = await freshTotpCode(bed.owner, factor.member.id, factor.secret)
    const own = await secondStep(bed.app, cookie, 'TOTP', code, { origin: OWN })
    expect(own.statusCode, own.body).toBe(200)
  })

  it('refuses POST /v1/login/mfa/sms with the mfa cookie from another site, and sends nothing', async () => {
    const factor = await smsMember(bed)
    const cookie = mfaCookieOf(await passwordStep(bed.app, factor.member, factor.tenant))
    for (const headers of CROSS_SITE) {
      expectProblem(await sendLoginCode(bed.app, cookie, headers), 403, 'CSRF_ORIGIN_REJECTED')
    }
    expect(await sentTo(bed, factor.member.phone!)).toEqual([])
    expect((await sendLoginCode(bed.app, cookie, { origin: OWN })).statusCode).toBe(202)
    expect(await sentTo(bed, factor.member.phone!)).toHaveLength(1)
  })

  /** A member with TOTP enabled and a second enrolment pending (whose secret is known), SMS off. */
  async function memberMidEnrolment() {
    const factor = await totpMember(bed)
    const started = await mfaCall(bed.app, factor.bearer, '/totp', { password: factor.member.password })
    expect(started.statusCode).toBe(200)
    return { ...factor, pending: (started.json() as { secret: string }).secret }
  }

  /** Each POST under /v1/me/mfa with a body that would change something if it passed. */
  function changes(factor: TotpMember & { pending: string }): [string, object][] {
    const password = { password: factor.member.password }
    return [
      ['/totp', password],
      ['/totp/confirm', { code: totpCode(factor.pending) }],
      ['/sms', password],
      ['/recovery-codes', password],
      ['/sms/disable', password],
      ['/totp/disable', password],
    ]
  }

  const byCookie = (factor: TotpMember, path: string, payload: object, headers: Record<string, string>) =>
    bed.app.inject({ method: 'POST', url: `/v1/me/mfa${path}`, cookies: accessCookie(factor.bearer), headers, payload })

  it('refuses every POST under /v1/me/mfa with the access cookie from another site, and changes nothing', async () => {
    const factor = await memberMidEnrolment()
    const state = async () => ({ row: await storedSecondFactors(bed.owner, factor.member.id), codes: await storedRecoveryCodes(bed.owner, factor.member.id) })
    const before = await state()
    expect(before.row).toMatchObject({ totpEnabledAt: expect.any(Date), totpPendingSecret: expect.any(String), smsEnabledAt: null })

    for (const headers of CROSS_SITE) {
      for (const [path, payload] of changes(factor)) {
        const answer = await byCookie(factor, path, payload, headers)
        expect({ path, status: answer.statusCode, code: answer.json().code }).toEqual({ path, status: 403, code: 'CSRF_ORIGIN_REJECTED' })
      }
    }
    expect(await state()).toEqual(before)
  })

  it("accepts the same requests by cookie from the service's own origin", async () => {
    const factor = await memberMidEnrolment()
    const expected: Record<string, number> = {
      '/totp': 200,
      '/totp/confirm': 200,
      '/sms': 204,
      '/recovery-codes': 200,
      '/sms/disable': 204,
      '/totp/disable': 204,
    }
    for (const [path, payload] of changes(factor)) {
      // The confirmation takes the code of the enrolment that the /totp just before started.
      const body = path === '/totp/confirm' ? { code: totpCode(factor.pending) } : payload
      const answer = await byCookie(factor, path, body, { origin: OWN })
      expect({ path, status: answer.statusCode }, answer.body).toEqual({ path, status: expected[path] })
      if (path === '/totp') factor.pending = (answer.json() as { secret: string }).secret
    }
    expect(await storedSecondFactors(bed.owner, factor.member.id)).toBeUndefined()
  })
})

describe('the secrets of the second factor at rest and in the logs', () => {
  const TABLES = ['userSecondFactors', 'userRecoveryCodes', 'mfaChallenges', 'auditEvents'] as const

  /** Every row of the factor's tables and the audit log, as JSON text, read as the owner past RLS. */
  async function dump(): Promise<string> {
    const texts: string[] = []
    for (const table of TABLES) texts.push(`${table}: ${JSON.stringify(await bed.owner.selectFrom(table).selectAll().execute())}`)
    return texts.join('\n')
  }

  /** The forms a secret could be written in. */
  function forms(factor: TotpMember, pending: string, moreCodes: string[], cookie: string): string[] {
    const secrets = [factor.secret, pending].flatMap((secret) => [secret, Secret.fromBase32(secret).hex, Buffer.from(Secret.fromBase32(secret).buffer).toString('base64')])
    const codes = [...factor.recoveryCodes, ...moreCodes].flatMap((code) => [code, code.replace('-', '')])
    return [...secrets, ...codes, cookie, cookie.split('.')[1]!].map((form) => form.toLowerCase())
  }

  it('keeps the TOTP secret, the recovery codes and the mfa token out of every row and every log line', async () => {
    const linesBefore = bed.logLines.length
    const factor = await totpMember(bed)
    const started = await mfaCall(bed.app, factor.bearer, '/totp', { password: factor.member.password })
    const pending = (started.json() as { secret: string }).secret
    const cookie = mfaCookieOf(await passwordStep(bed.app, factor.member, factor.tenant))
    const whileLive = await dump()
    expect(whileLive).toContain(`"userId":${factor.member.id}`)
    expect(JSON.stringify(await bed.owner.selectFrom('mfaChallenges').selectAll().where('userId', '=', factor.member.id).execute())).not.toBe('[]')

    expectProblem(await secondStep(bed.app, cookie, 'TOTP', notTheTotpCode(factor.secret)), 401, 'MFA_CODE_INVALID')
    expectProblem(await secondStep(bed.app, cookie, 'RECOVERY_CODE', NOBODYS_RECOVERY_CODE), 401, 'MFA_CODE_INVALID')
    expect((await secondStep(bed.app, cookie, 'RECOVERY_CODE', factor.recoveryCodes[0]!)).statusCode).toBe(200)
    const regenerated = await mfaCall(bed.app, factor.bearer, '/recovery-codes', { password: factor.member.password })
    const moreCodes = (regenerated.json() as { recoveryCodes: string[] }).recoveryCodes
    const afterwards = await dump()
    const log = bed.logLines.slice(linesBefore).join('\n')
    // The capture works: the steps were logged, and the audit log holds the sign-in.
    expect(log).toContain('/v1/login/mfa')
    expect(afterwards).toContain('LOGIN_SUCCEEDED')

    for (const form of forms(factor, pending, moreCodes, cookie)) {
      expect(whileLive.toLowerCase(), 'the database while the challenge is live').not.toContain(form)
      expect(afterwards.toLowerCase(), 'the database afterwards').not.toContain(form)
      expect(log.toLowerCase(), 'the log').not.toContain(form)
    }
  })
})
