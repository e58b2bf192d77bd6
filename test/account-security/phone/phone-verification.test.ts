import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import {
  type Academy,
  bearerFor,
  buildAppWithoutSender,
  codeIn,
  codeSentTo,
  createAcademy,
  insertMember,
  type Member,
  otherCode,
  sentTo,
  storedCode,
  SYSTEM_SENDER,
  uniquePhone,
  useRecoveryBed,
} from '../recovery-bed.js'

const bed = useRecoveryBed({ SVC_OTP_DAILY_LIMIT: '3' })

const send = (headers: Record<string, string>, payload?: object) =>
  bed.app.inject({ method: 'POST', url: '/v1/me/phone/verification', headers, ...(payload === undefined ? {} : { payload }) })
/** The password of each signed-in member's bearer header: confirming a number takes it with the code. */
const passwords = new Map<string | undefined, string>()
async function signedIn(member: Member, tenant: Academy) {
  const headers = await bearerFor(bed.app, member, tenant)
  passwords.set(headers.authorization, member.password)
  return headers
}
const confirm = (headers: Record<string, string>, code: unknown, extra: Record<string, string> = {}) =>
  bed.app.inject({
    method: 'POST',
    url: '/v1/me/phone/verification/confirm',
    headers: { ...headers, ...extra },
    payload: { code, password: passwords.get(headers.authorization) ?? 'Not-Their-Password-1' },
  })

/** A signed-in member whose phone is not verified yet. */
async function unverifiedMember(options: { phone?: string | null } = {}) {
  const tenant = await createAcademy(bed.owner)
  const member = await insertMember(bed.owner, tenant, { verified: false, ...options })
  return { tenant, member, headers: await signedIn(member, tenant) }
}

const verifiedAt = async (userId: number) =>
  (await bed.owner.selectFrom('users').select('phoneVerifiedAt').where('id', '=', userId).executeTakeFirstOrThrow()).phoneVerifiedAt

/** Lets the slot's resend interval end at once, as time passing would. */
const resendNow = (userId: number) =>
  bed.owner.updateTable('oneTimeCodes').set({ resendAfter: new Date(Date.now() - 1000) }).where('userId', '=', userId).execute()

describe('POST /v1/me/phone/verification and /confirm', () => {
  it('sends the code from the system sender with the academy name, and confirming it verifies the phone', async () => {
    const { tenant, member, headers } = await unverifiedMember()
    const sent = await send(headers)
    expect(sent.statusCode).toBe(202)
    expect(sent.json()).toEqual({ expiresIn: 300, resendAfter: 60 })

    const messages = await sentTo(bed, member.phone!)
    expect(messages.map((message) => [message.from, message.type])).toEqual([[SYSTEM_SENDER, 'SMS']])
    const text = messages[0]!.text
    expect(text).toContain(`[${tenant.name}]`)
    expect(text).toMatch(/^\[.*\] 휴대폰 인증번호 [0-9]{6} \(5분 안에 입력\)$/)

    const confirmed = await confirm(headers, codeIn(text), { 'x-request-id': 'req-phone-verified' })
    expect(confirmed.statusCode).toBe(200)
    const user = confirmed.json()
    expect(user).toMatchObject({ id: member.id, phone: member.phone })
    expect(new Date(user.phoneVerifiedAt).getTime()).toBe((await verifiedAt(member.id))!.getTime())
    expect((await bed.app.inject({ method: 'GET', url: '/v1/me', headers })).json().phoneVerifiedAt).toBe(user.phoneVerifiedAt)
    // Used up: the same code again is refused.
    expectProblem(await confirm(headers, codeIn(text)), 400, 'OTP_INVALID')
  })

  it('records PHONE_VERIFIED for the user, by the user, with the masked number only', async () => {
    const { tenant, member, headers } = await unverifiedMember()
    expect((await send(headers)).statusCode).toBe(202)
    const code = await codeSentTo(bed, member.phone!)
    expectProblem(await confirm(headers, otherCode(code)), 400, 'OTP_INVALID')
    const noEvent = await bed.owner.selectFrom('auditEvents').select('id').where('tenantId', '=', tenant.id).execute()
    expect(noEvent).toEqual([])

    const confirmed = await bed.app.inject({
      method: 'POST',
      url: '/v1/me/phone/verification/confirm',
      headers: { ...headers, 'x-request-id': 'req-abc' },
      payload: { code, password: member.password },
      remoteAddress: '10.9.8.7',
    })
    expect(confirmed.statusCode).toBe(200)
    const events = await bed.owner.selectFrom('auditEvents').selectAll().where('tenantId', '=', tenant.id).execute()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'PHONE_VERIFIED',
      actorId: member.id,
      targetType: 'USER',
      targetId: String(member.id),
      requestId: 'req-abc',
      ipAddress: '10.9.8.7',
      details: { phone: `${member.phone!.slice(0, 3)}-****-${member.phone!.slice(-4)}` },
    })
    const details = JSON.stringify(events[0]!.details)
    expect(details).not.toContain(member.phone!)
    expect(details).not.toContain(code)
  })

  it('counts a wrong code as a try, even though the request is refused', async () => {
    const { member, headers } = await unverifiedMember()
    await send(headers)
    const code = await codeSentTo(bed, member.phone!)
    expectProblem(await confirm(headers, otherCode(code)), 400, 'OTP_INVALID')
    expectProblem(await confirm(headers, otherCode(otherCode(code))), 400, 'OTP_INVALID')
    expect((await storedCode(bed.owner, member.id, 'PHONE_VERIFICATION'))?.attempts).toBe(2)
    expect(await verifiedAt(member.id)).toBeNull()
    expect((await confirm(headers, code)).statusCode).toBe(200)
  })

  it('kills the live code and the verification when PATCH /v1/me sets a new phone; the same phone again keeps both', async () => {
    const { member, headers } = await unverifiedMember()
    await send(headers)
    const first = await codeSentTo(bed, member.phone!)
    expect((await confirm(headers, first)).statusCode).toBe(200)

    // The same number, written another way: nothing changes.
    const same = `${member.phone!.slice(0, 3)}-${member.phone!.slice(3, 7)}-${member.phone!.slice(7)}`
    const kept = await bed.app.inject({ method: 'PATCH', url: '/v1/me', headers, payload: { phone: same } })
    expect(kept.statusCode).toBe(200)
    expect(kept.json().phoneVerifiedAt).not.toBeNull()

    await resendNow(member.id)
    await send(headers)
    const pending = await codeSentTo(bed, member.phone!)
    const newPhone = uniquePhone()
    const changed = await bed.app.inject({ method: 'PATCH', url: '/v1/me', headers, payload: { phone: newPhone } })
    expect(changed.statusCode).toBe(200)
    expect(changed.json()).toMatchObject({ phone: newPhone, phoneVerifiedAt: null })
    expect(await verifiedAt(member.id)).toBeNull()
    expect(await storedCode(bed.owner, member.id, 'PHONE_VERIFICATION')).toBeUndefined()
    // A code surviving the change would verify the new number with a code the old one received.
    expectProblem(await confirm(headers, pending), 400, 'OTP_INVALID')
    expect(await verifiedAt(member.id)).toBeNull()

    // The new number gets a code of its own at once (the killed code's resend interval went with it).
    expect((await send(headers)).statusCode).toBe(202)
    expect((await confirm(headers, await codeSentTo(bed, newPhone))).statusCode).toBe(200)
  })

  it('answers OTP_RATE_LIMITED with Retry-After within the resend interval, sending nothing more', async () => {
    const { member, headers } = await unverifiedMember()
    expect((await send(headers)).statusCode).toBe(202)
    const again = await send(headers)
    expectProblem(again, 429, 'OTP_RATE_LIMITED')
    const retryAfter = Number(again.headers['retry-after'])
    expect(retryAfter).toBeGreaterThanOrEqual(59)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(await sentTo(bed, member.phone!)).toHaveLength(1)
  })

  it('answers OTP_RATE_LIMITED until the next local midnight beyond the daily limit of the account', async () => {
    const { member, headers } = await unverifiedMember()
    for (let sent = 0; sent < 3; sent++) {
      expect((await send(headers)).statusCode).toBe(202)
      await resendNow(member.id)
    }
    // A fresh number, so that only the account's own count can refuse.
    const newPhone = uniquePhone()
    expect((await bed.app.inject({ method: 'PATCH', url: '/v1/me', headers, payload: { phone: newPhone } })).statusCode).toBe(200)
    const refused = await send(headers)
    expectProblem(refused, 429, 'OTP_RATE_LIMITED')
    const { rows } = await sql<{ seconds: number }>`select svc_seconds_to_local_midnight('Asia/Seoul') as seconds`.execute(bed.owner)
    expect(Math.abs(Number(refused.headers['retry-after']) - rows[0]!.seconds)).toBeLessThanOrEqual(2)
    expect(refused.json().detail).toBe('Too many codes today for this account.')
    expect(await sentTo(bed, member.phone!)).toHaveLength(3)
    expect(await sentTo(bed, newPhone)).toEqual([])
  })

  it('answers PHONE_REQUIRED to a user without a phone, storing and sending nothing', async () => {
    const { member, headers } = await unverifiedMember({ phone: null })
    expectProblem(await send(headers), 400, 'PHONE_REQUIRED')
    expect(await storedCode(bed.owner, member.id, 'PHONE_VERIFICATION')).toBeUndefined()
    expectProblem(await confirm(headers, '123456'), 400, 'OTP_INVALID')
  })

  it('refuses a body where none is taken, and a code that is not six digits, with VALIDATION_FAILED', async () => {
    const { member, headers } = await unverifiedMember()
    expectProblem(await send(headers, { phone: '01011112222' }), 400, 'VALIDATION_FAILED')
    expectProblem(await send(headers, []), 400, 'VALIDATION_FAILED')
    expect(await storedCode(bed.owner, member.id, 'PHONE_VERIFICATION')).toBeUndefined()
    expect((await send(headers, {})).statusCode).toBe(202)
    for (const code of ['12345', '1234567', '12345a', ' 123456', 123456, null]) {
      expectProblem(await confirm(headers, code), 400, 'VALIDATION_FAILED')
    }
    const extra = await bed.app.inject({
      method: 'POST',
      url: '/v1/me/phone/verification/confirm',
      headers,
      payload: { code: '123456', password: member.password, phone: '01011112222' },
    })
    expectProblem(extra, 400, 'VALIDATION_FAILED')
    // None of those was a try.
    expect((await storedCode(bed.owner, member.id, 'PHONE_VERIFICATION'))?.attempts).toBe(0)
  })

  it('needs a token (AUTH_002) and refuses a token whose user is of another tenant (AUTH_003)', async () => {
    expectProblem(await send({}), 401, 'AUTH_002')
    expectProblem(await confirm({}, '123456'), 401, 'AUTH_002')
    const a = await createAcademy(bed.owner)
    const b = await createAcademy(bed.owner)
    const victim = await insertMember(bed.owner, b, { verified: false })
    const forged = await bearerFor(bed.app, victim, a)
    expectProblem(await send(forged), 401, 'AUTH_003')
    expectProblem(await confirm(forged, '123456'), 401, 'AUTH_003')
    expect(await storedCode(bed.owner, victim.id, 'PHONE_VERIFICATION')).toBeUndefined()
  })

  it("never confirms one user's phone with a code sent to another, in the same tenant or another", async () => {
    const first = await unverifiedMember()
    const sameTenant = await insertMember(bed.owner, first.tenant, { verified: false })
    const sameTenantHeaders = await signedIn(sameTenant, first.tenant)
    const otherTenant = await unverifiedMember({ phone: first.member.phone })
    await send(first.headers)
    const firstCode = await codeSentTo(bed, first.member.phone!)
    await send(sameTenantHeaders)
    await send(otherTenant.headers)
    expect(await sentTo(bed, first.member.phone!)).toHaveLength(2)

    expectProblem(await confirm(sameTenantHeaders, firstCode), 400, 'OTP_INVALID')
    expectProblem(await confirm(otherTenant.headers, firstCode), 400, 'OTP_INVALID')
    expect(await verifiedAt(sameTenant.id)).toBeNull()
    expect(await verifiedAt(otherTenant.member.id)).toBeNull()
    expect((await confirm(first.headers, firstCode)).statusCode).toBe(200)
  })

  it('answers OTP_INVALID to a code that expired, and deletes it', async () => {
    const { member, headers } = await unverifiedMember()
    await send(headers)
    const code = await codeSentTo(bed, member.phone!)
    await bed.owner.updateTable('oneTimeCodes').set({ expiresAt: new Date(Date.now() - 1000) }).where('userId', '=', member.id).execute()
    expectProblem(await confirm(headers, code), 400, 'OTP_INVALID')
    expect(await storedCode(bed.owner, member.id, 'PHONE_VERIFICATION')).toBeUndefined()
  })

  it("answers SMS_QUOTA_EXCEEDED beyond the academy's daily recipient quota, storing nothing", async () => {
    const { tenant, member, headers } = await unverifiedMember()
    await bed.owner.updateTable('tenants').set({ dailyRecipientQuota: 1 }).where('id', '=', tenant.id).execute()
    expect((await send(headers)).statusCode).toBe(202)
    await resendNow(member.id)
    const refused = await send(headers)
    expectProblem(refused, 429, 'SMS_QUOTA_EXCEEDED')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(await sentTo(bed, member.phone!)).toHaveLength(1)
    const counted = await bed.owner.selectFrom('oneTimeCodeDays').select('codes').where('userId', '=', member.id).executeTakeFirst()
    expect(counted).toEqual({ codes: 1 })
  })
})

describe('POST /v1/me/phone/verification with the live provider and no sender number', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await buildAppWithoutSender(bed)
  })
  afterAll(async () => {
    await app?.close()
  })

  it('answers SENDER_SETTING_NOT_APPROVED and stores no code', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant, { verified: false })
    const refused = await app.inject({ method: 'POST', url: '/v1/me/phone/verification', headers: await bearerFor(app, member, tenant) })
    expectProblem(refused, 409, 'SENDER_SETTING_NOT_APPROVED')
    expect(await storedCode(bed.owner, member.id, 'PHONE_VERIFICATION')).toBeUndefined()
  })
})
