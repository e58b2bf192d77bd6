import type { AuditEventType } from '../../../lib/audit/event-types.js'
import { describe, expect, it } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import { mfaCall, mfaCookieOf, passwordStep, sendLoginCode } from '../second-factor/mfa-bed.js'
import {
  bearerFor,
  codeSentTo,
  createAcademy,
  insertMember,
  sentTo,
  storedCode,
  uniquePhone,
  useRecoveryBed,
  type Academy,
  type Member,
} from '../recovery-bed.js'

// A stolen access token alone used to take an account over: change the phone to the thief's, verify it with the code
// that arrives there, then recover the password through it. These tests are that attack and its parts.
const bed = useRecoveryBed()

const patchPhone = (headers: Record<string, string>, phone: string | null) =>
  bed.app.inject({ method: 'PATCH', url: '/v1/me', headers, payload: { phone } })
const sendCode = (headers: Record<string, string>) => bed.app.inject({ method: 'POST', url: '/v1/me/phone/verification', headers })
const confirm = (headers: Record<string, string>, payload: object) =>
  bed.app.inject({ method: 'POST', url: '/v1/me/phone/verification/confirm', headers, payload })
const forgot = (tenant: Academy, member: Member) =>
  bed.app.inject({ method: 'POST', url: '/v1/password/forgot', payload: { userLoginId: member.userLoginId, customId: tenant.customId } })

/** A staff member with a verified phone, and the bearer header a thief would have stolen. */
async function victim() {
  const tenant = await createAcademy(bed.owner)
  const member = await insertMember(bed.owner, tenant, { role: 'MANAGER' })
  return { tenant, member, headers: await bearerFor(bed.app, member, tenant, 'MANAGER') }
}

const userRow = (id: number) =>
  bed.owner.selectFrom('users').select(['phone', 'phoneVerifiedAt', 'verifiedPhoneReplacedAt']).where('id', '=', id).executeTakeFirstOrThrow()
const failures = async (id: number) =>
  (await bed.owner.selectFrom('userLoginFailures').select('failures').where('userId', '=', id).executeTakeFirst())?.failures ?? 0
const eventsOf = (tenantId: number, type: AuditEventType) =>
  bed.owner.selectFrom('auditEvents').selectAll().where('tenantId', '=', tenantId).where('type', '=', type).orderBy('id').execute()
const masked = (phone: string) => `${phone.slice(0, 3)}-****-${phone.slice(-4)}`

/** Ends the wait after a replaced verified phone at once, as the hours passing would. */
const holdOver = (id: number) =>
  bed.owner.updateTable('users').set({ verifiedPhoneReplacedAt: new Date(Date.now() - 25 * 3600_000) }).where('id', '=', id).execute()

describe('a stolen session and the phone (PATCH /v1/me, /v1/me/phone/verification/confirm)', () => {
  it('cannot verify the thief’s number without the password, so recovery never reaches it', async () => {
    const { tenant, member, headers } = await victim()
    const thief = uniquePhone()
    expect((await patchPhone(headers, thief)).statusCode).toBe(200)
    expect((await sendCode(headers)).statusCode).toBe(202)
    const code = await codeSentTo(bed, thief)

    // The code alone no longer proves anything: the password is part of the proof.
    expectProblem(await confirm(headers, { code }), 400, 'VALIDATION_FAILED')
    expectProblem(await confirm(headers, { code, password: 'Guessed-Password-1' }), 400, 'AUTH_013')
    expect(await failures(member.id)).toBe(1)
    // The code stays alive, its try counted.
    expect((await storedCode(bed.owner, member.id, 'PHONE_VERIFICATION'))?.attempts).toBe(1)
    expect((await userRow(member.id)).phoneVerifiedAt).toBeNull()
    expect(await eventsOf(tenant.id, 'LOGIN_FAILED')).toHaveLength(1)

    expect((await forgot(tenant, member)).statusCode).toBe(202)
    expect((await sentTo(bed, thief)).map((message) => message.text)).toEqual([expect.stringContaining('휴대폰 인증번호')])

    // The owner of the account, with the password, still proves the number with the same code.
    expect((await confirm(headers, { code, password: member.password })).statusCode).toBe(200)
    expect(await failures(member.id)).toBe(0)
  })

  it('dies with the code after SVC_OTP_MAX_ATTEMPTS wrong passwords', async () => {
    const { member, headers } = await victim()
    const thief = uniquePhone()
    await patchPhone(headers, thief)
    await sendCode(headers)
    const code = await codeSentTo(bed, thief)
    for (let attempt = 0; attempt < bed.app.env.SVC_OTP_MAX_ATTEMPTS; attempt++) {
      const refused = await confirm(headers, { code, password: `Wrong-Password-${attempt}` })
      expect(refused.json().code).toMatch(/^AUTH_01[38]$/)
    }
    await bed.owner.deleteFrom('userLoginFailures').where('userId', '=', member.id).execute()
    expectProblem(await confirm(headers, { code, password: member.password }), 400, 'OTP_INVALID')
  })

  it('records PHONE_CHANGED with both numbers masked and tells the replaced verified number', async () => {
    const { tenant, member, headers } = await victim()
    const before = member.phone!
    const thief = uniquePhone()
    const changed = await bed.app.inject({ method: 'PATCH', url: '/v1/me', headers: { ...headers, 'x-request-id': 'req-phone' }, payload: { phone: thief } })
    expect(changed.statusCode).toBe(200)
    const events = await eventsOf(tenant.id, 'PHONE_CHANGED')
    expect(events).toEqual([
      expect.objectContaining({
        actorId: member.id,
        targetType: 'USER',
        targetId: String(member.id),
        requestId: 'req-phone',
        ipAddress: '127.0.0.1',
        details: { from: masked(before), to: masked(thief) },
      }),
    ])
    expect(JSON.stringify(events)).not.toContain(thief)
    expect(JSON.stringify(events)).not.toContain(before)

    const notices = await sentTo(bed, before)
    expect(notices).toHaveLength(1)
    expect(notices[0]!.text).toMatch(new RegExp(`^\\[${tenant.name}\\] \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}에 계정의 휴대폰 번호가 변경되었습니다`))
    expect(notices[0]!.text).not.toContain(thief.slice(3))
    // The notice is the service's own message: never in the staff history.
    const history = await bed.app.inject({ method: 'GET', url: '/v1/sms/history', headers })
    expect(history.json()).toMatchObject({ items: [], total: 0 })

    // Removing the number is a change too; an unverified number is not told of anything.
    expect((await patchPhone(headers, null)).statusCode).toBe(200)
    expect((await eventsOf(tenant.id, 'PHONE_CHANGED')).map((event) => event.details)).toEqual([
      { from: masked(before), to: masked(thief) },
      { from: masked(thief), to: null },
    ])
    expect(await sentTo(bed, thief)).toEqual([])
    // The same number again is no change.
    const again = await victim()
    expect((await patchPhone(again.headers, again.member.phone)).statusCode).toBe(200)
    expect(await eventsOf(again.tenant.id, 'PHONE_CHANGED')).toEqual([])
    expect(await sentTo(bed, again.member.phone!)).toEqual([])
  })

  it('records PHONE_CHANGED for a writer that is not the service too (an operator, an older instance), with no actor', async () => {
    const { tenant, member } = await victim()
    const next = uniquePhone()
    await bed.owner.updateTable('users').set({ phone: next }).where('id', '=', member.id).execute()
    expect(await eventsOf(tenant.id, 'PHONE_CHANGED')).toEqual([
      expect.objectContaining({ actorId: null, ipAddress: null, requestId: null, targetId: String(member.id), details: { from: masked(member.phone!), to: masked(next) } }),
    ])
    expect(await userRow(member.id)).toMatchObject({ phoneVerifiedAt: null, verifiedPhoneReplacedAt: expect.any(Date) })
    // A number of fewer than eight digits is masked whole.
    await bed.owner.updateTable('users').set({ phone: '0212' }).where('id', '=', member.id).execute()
    expect((await eventsOf(tenant.id, 'PHONE_CHANGED')).at(-1)!.details).toEqual({ from: masked(next), to: '***-****-****' })
  })

  it('keeps recovery and the SMS second factor away from a new number for SVC_PHONE_CHANGE_HOLD_HOURS', async () => {
    const { tenant, member, headers } = await victim()
    expect((await mfaCall(bed.app, headers, '/sms', { password: member.password })).statusCode).toBe(204)
    const next = uniquePhone()
    await patchPhone(headers, next)
    await sendCode(headers)
    expect((await confirm(headers, { code: await codeSentTo(bed, next), password: member.password })).statusCode).toBe(200)
    expect(await userRow(member.id)).toMatchObject({ phone: next, phoneVerifiedAt: expect.any(Date), verifiedPhoneReplacedAt: expect.any(Date) })

    // Verified, yet within the wait: recovery answers as always and sends nothing; the SMS step says why.
    expect((await forgot(tenant, member)).statusCode).toBe(202)
    expect(await sentTo(bed, next)).toHaveLength(1)
    const cookie = mfaCookieOf(await passwordStep(bed.app, member, tenant))
    expectProblem(await sendLoginCode(bed.app, cookie), 409, 'PHONE_NOT_VERIFIED')
    expect(await sentTo(bed, next)).toHaveLength(1)

    // Moving on to a third number does not shorten the wait: it counts from the verified number's replacement.
    const stamped = (await userRow(member.id)).verifiedPhoneReplacedAt
    await holdOver(member.id)
    expect((await sendLoginCode(bed.app, cookie)).statusCode).toBe(202)
    expect(await sentTo(bed, next)).toHaveLength(2)
    expect((await forgot(tenant, member)).statusCode).toBe(202)
    expect((await sentTo(bed, next)).at(-1)!.text).toContain('비밀번호 재설정 인증번호')
    expect(stamped).not.toBeNull()
  })

  it('does not start the wait when an unverified number is replaced', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant, { verified: false })
    const headers = await bearerFor(bed.app, member, tenant)
    const next = uniquePhone()
    await patchPhone(headers, next)
    expect((await userRow(member.id)).verifiedPhoneReplacedAt).toBeNull()
    await sendCode(headers)
    expect((await confirm(headers, { code: await codeSentTo(bed, next), password: member.password })).statusCode).toBe(200)
    expect((await forgot(tenant, member)).statusCode).toBe(202)
    expect((await sentTo(bed, next)).at(-1)!.text).toContain('비밀번호 재설정 인증번호')
  })

  it('keeps a wait that began earlier when the phone moves again', async () => {
    const { member, headers } = await victim()
    await patchPhone(headers, uniquePhone())
    const first = (await userRow(member.id)).verifiedPhoneReplacedAt
    await new Promise((resolve) => setTimeout(resolve, 20))
    await patchPhone(headers, uniquePhone())
    expect((await userRow(member.id)).verifiedPhoneReplacedAt).toEqual(first)
  })

  it('refuses a change whose notice cannot go (the academy’s quota is spent), changing nothing', async () => {
    const { tenant, member, headers } = await victim()
    await bed.owner.updateTable('tenants').set({ dailyRecipientQuota: 1 }).where('id', '=', tenant.id).execute()
    expect((await sendCode(headers)).statusCode).toBe(202)
    expectProblem(await patchPhone(headers, uniquePhone()), 429, 'SMS_QUOTA_EXCEEDED')
    expect(await userRow(member.id)).toMatchObject({ phone: member.phone, phoneVerifiedAt: expect.any(Date), verifiedPhoneReplacedAt: null })
    expect(await eventsOf(tenant.id, 'PHONE_CHANGED')).toEqual([])
  })
})
