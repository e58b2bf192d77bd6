import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectProblem, registerOwner } from '../../support/auth-fixtures.js'
import { buildTestApp, itConcurrent } from '../../support/helper.js'
import { inOneRateWindow } from '../../support/rate-window.js'
import { buildAppWithoutSender, codeIn, createAcademy, insertMember, sentTo, storedCode, SYSTEM_SENDER, uniquePhone, useRecoveryBed } from '../recovery-bed.js'

const bed = useRecoveryBed({ SVC_OTP_DAILY_LIMIT: '2' })

const forgot = (payload: object, extras: { headers?: Record<string, string>; remoteAddress?: string } = {}) =>
  bed.app.inject({ method: 'POST', url: '/v1/password/forgot', payload, ...extras })

/** What a client could compare between two answers: status, body bytes and the headers besides the per-request ones. */
function visible(response: LightMyRequestResponse) {
  const { 'x-request-id': _id, date: _date, ...headers } = response.headers
  return { status: response.statusCode, body: response.body, headers }
}

/** Lets the answered requests finish, then every resend interval end at once, as time passing would. */
async function resendNow() {
  await bed.app.passwordRecovery.settled()
  await sql`update one_time_codes set resend_after = now() - interval '1 second'`.execute(bed.owner)
}

describe('POST /v1/password/forgot', () => {
  it('sends a reset code to the verified phone of a portal user, from the system sender, and answers 202 {expiresIn}', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const response = await forgot({ userLoginId: member.userLoginId, customId: tenant.customId })
    expect(response.statusCode).toBe(202)
    expect(response.json()).toEqual({ expiresIn: 300 })
    const sent = await sentTo(bed, member.phone!)
    expect(sent.map((message) => message.from)).toEqual([SYSTEM_SENDER])
    expect(sent[0]!.text).toMatch(new RegExp(`^\\[${tenant.name}\\] 비밀번호 재설정 인증번호 [0-9]{6} \\(5분 안에 입력\\)$`))
    const row = await storedCode(bed.owner, member.id, 'PASSWORD_RESET')
    expect(row).toMatchObject({ phone: member.phone, attempts: 0 })
    expect(row!.codeHash).not.toContain(codeIn(sent[0]!.text))
  })

  it('sends an owner a code through the root entry, by the exact login id only', async () => {
    const registered = await registerOwner(bed.app)
    expect(registered.response.statusCode).toBe(201)
    const phone = uniquePhone()
    await bed.owner.updateTable('users').set({ phone }).where('id', '=', registered.user.id).execute()
    await bed.owner.updateTable('users').set({ phoneVerifiedAt: new Date() }).where('id', '=', registered.user.id).execute()

    expect((await forgot({ userLoginId: registered.loginId.toUpperCase() })).statusCode).toBe(202)
    expect(await sentTo(bed, phone)).toEqual([])
    expect((await forgot({ userLoginId: registered.loginId })).statusCode).toBe(202)
    expect(await sentTo(bed, phone)).toHaveLength(1)
  })

  it('answers byte for byte the same, and sends nothing, for every account a code may not go to', async () => {
    const tenant = await createAcademy(bed.owner)
    const suspendedTenant = await createAcademy(bed.owner, { status: 'SUSPENDED' })
    const verified = await insertMember(bed.owner, tenant)
    const cases = {
      verified,
      noPhone: await insertMember(bed.owner, tenant, { phone: null }),
      unverified: await insertMember(bed.owner, tenant, { verified: false }),
      suspendedUser: await insertMember(bed.owner, tenant, { status: 'SUSPENDED' }),
      deletedUser: await insertMember(bed.owner, tenant, { status: 'DELETED' }),
      inSuspendedTenant: await insertMember(bed.owner, suspendedTenant),
    }
    const entry = (member: { userLoginId: string }, customId = tenant.customId) => ({ userLoginId: member.userLoginId, customId })
    const answers = {
      known: await forgot(entry(verified)),
      // The same account again at once: within the resend interval.
      overResendInterval: await forgot(entry(verified)),
      unknownTenant: await forgot({ userLoginId: verified.userLoginId, customId: randomBytes(5).toString('hex').toUpperCase() }),
      unknownUser: await forgot({ userLoginId: `nobody-${randomBytes(4).toString('hex')}`, customId: tenant.customId }),
      unknownOwner: await forgot({ userLoginId: `nobody-${randomBytes(4).toString('hex')}` }),
      noPhone: await forgot(entry(cases.noPhone)),
      unverified: await forgot(entry(cases.unverified)),
      suspendedUser: await forgot(entry(cases.suspendedUser)),
      deletedUser: await forgot(entry(cases.deletedUser)),
      suspendedTenant: await forgot(entry(cases.inSuspendedTenant, suspendedTenant.customId)),
    }
    const expected = visible(answers.known)
    expect(expected).toMatchObject({ status: 202, body: '{"expiresIn":300}' })
    for (const [name, answer] of Object.entries(answers)) expect({ name, ...visible(answer) }).toEqual({ name, ...expected })

    const dbg = await sentTo(bed, verified.phone!)
    if (dbg.length !== 1) console.log('DEBUG', bed.logLines.filter((l) => /recovery|error|warn/i.test(l)).slice(-5).join('\n'))
    expect(dbg).toHaveLength(1)
    for (const member of [cases.unverified, cases.suspendedUser, cases.deletedUser, cases.inSuspendedTenant]) {
      expect(await sentTo(bed, member.phone!)).toEqual([])
      expect(await storedCode(bed.owner, member.id, 'PASSWORD_RESET')).toBeUndefined()
    }
    expect(await storedCode(bed.owner, cases.noPhone.id, 'PASSWORD_RESET')).toBeUndefined()
    const queued = await bed.owner.selectFrom('smsMessages').select('id').where('tenantId', 'in', [tenant.id, suspendedTenant.id]).execute()
    expect(queued).toHaveLength(1)
  })

  it("answers the same and sends nothing beyond the daily limit of the account, or beyond the academy's quota", async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const entry = { userLoginId: member.userLoginId, customId: tenant.customId }
    const first = visible(await forgot(entry))
    await resendNow()
    expect(visible(await forgot(entry))).toEqual(first)
    // A new verified number, so that only the account's own count can hold the third code back.
    await bed.app.passwordRecovery.settled()
    const newPhone = uniquePhone()
    await bed.owner.updateTable('users').set({ phone: newPhone }).where('id', '=', member.id).execute()
    await bed.owner.updateTable('users').set({ phoneVerifiedAt: new Date() }).where('id', '=', member.id).execute()
    expect(visible(await forgot(entry))).toEqual(first)
    expect(await sentTo(bed, member.phone!)).toHaveLength(2)
    expect(await sentTo(bed, newPhone)).toEqual([])

    // The academy's quota is used up: still the same answer, nothing queued.
    const other = await insertMember(bed.owner, tenant)
    await bed.owner.updateTable('tenants').set({ dailyRecipientQuota: 2 }).where('id', '=', tenant.id).execute()
    expect(visible(await forgot({ userLoginId: other.userLoginId, customId: tenant.customId }))).toEqual(first)
    expect(await sentTo(bed, other.phone!)).toEqual([])
    expect(await storedCode(bed.owner, other.id, 'PASSWORD_RESET')).toBeUndefined()
  })

  itConcurrent('answers before it looks anything up: a lookup held back by a lock does not hold the answer back', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    await bed.owner.transaction().execute(async (trx) => {
      // Every read of tenants waits until this transaction ends. Were the answer to wait for the lookup, it would
      // wait for this lock, which is released only after the answer: the request would end by its statement timeout.
      await sql`lock table tenants in access exclusive mode`.execute(trx)
      const answer = await forgot({ userLoginId: member.userLoginId, customId: tenant.customId })
      expect({ status: answer.statusCode, body: answer.body }).toEqual({ status: 202, body: '{"expiresIn":300}' })
      expect(await trx.selectFrom('oneTimeCodes').select('userId').where('userId', '=', member.id).execute()).toEqual([])
    })
    expect(await sentTo(bed, member.phone!)).toHaveLength(1)
  })

  it('ignores a token, stale or not: the prefix reads none', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const response = await forgot({ userLoginId: member.userLoginId, customId: tenant.customId }, { headers: { authorization: 'Bearer garbage' } })
    expect(response.statusCode).toBe(202)
    expect(await sentTo(bed, member.phone!)).toHaveLength(1)
  })

  it('refuses a malformed body with VALIDATION_FAILED (never a 500)', async () => {
    for (const payload of [{}, { customId: 'ABC' }, { userLoginId: '' }, { userLoginId: 'a b' }, { userLoginId: 'x\u0000' }, { userLoginId: 'x', extra: 1 }, { userLoginId: 'x', customId: '' }, { userLoginId: 7 }]) {
      expectProblem(await forgot(payload), 400, 'VALIDATION_FAILED')
    }
    const notJson = await bed.app.inject({ method: 'POST', url: '/v1/password/forgot', headers: { 'content-type': 'application/json' }, payload: '{"userLoginId":' })
    expectProblem(notJson, 400, 'VALIDATION_FAILED')
  })
})

describe('POST /v1/password/forgot with the live provider and no sender number', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await buildAppWithoutSender(bed)
  })
  afterAll(async () => {
    await app?.close()
  })

  it('answers as always and stores nothing', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const answer = await app.inject({ method: 'POST', url: '/v1/password/forgot', payload: { userLoginId: member.userLoginId, customId: tenant.customId } })
    expect({ status: answer.statusCode, body: answer.body }).toEqual({ status: 202, body: '{"expiresIn":300}' })
    await app.passwordRecovery.settled()
    expect(await storedCode(bed.owner, member.id, 'PASSWORD_RESET')).toBeUndefined()
    expect(await bed.owner.selectFrom('smsMessages').select('id').where('tenantId', '=', tenant.id).execute()).toEqual([])
  })
})

describe('POST /v1/password/forgot during a shutdown', () => {
  it('still does the work of a request answered just before the close', async () => {
    const app = await buildTestApp({ DATABASE_URL: bed.provider.iso.url })
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    const answer = await app.inject({ method: 'POST', url: '/v1/password/forgot', payload: { userLoginId: member.userLoginId, customId: tenant.customId } })
    expect(answer.statusCode).toBe(202)
    await app.close()
    expect(await storedCode(bed.owner, member.id, 'PASSWORD_RESET')).toMatchObject({ phone: member.phone })
  })
})

describe('POST /v1/password/forgot and /reset on the per-address budget', () => {
  const LIMIT = 3
  let app: FastifyInstance
  beforeAll(async () => {
    app = await buildTestApp({ DATABASE_URL: bed.provider.iso.url, SVC_LOGIN_IP_PER_MINUTE: String(LIMIT) })
  })
  afterAll(async () => {
    await app?.close()
  })

  it('answers RATE_LIMITED with Retry-After beyond the budget, on forgot and on reset, and sends nothing', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant)
    await inOneRateWindow(bed.owner, async (remoteAddress) => {
      const entry = { userLoginId: `nobody-${randomBytes(4).toString('hex')}`, customId: tenant.customId }
      for (let request = 0; request < LIMIT; request++) {
        expect((await app.inject({ method: 'POST', url: '/v1/password/forgot', payload: entry, remoteAddress })).statusCode).toBe(202)
      }
      const refused = await app.inject({
        method: 'POST',
        url: '/v1/password/forgot',
        payload: { userLoginId: member.userLoginId, customId: tenant.customId },
        remoteAddress,
      })
      expectProblem(refused, 429, 'RATE_LIMITED')
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      const reset = await app.inject({
        method: 'POST',
        url: '/v1/password/reset',
        payload: { ...entry, code: '123456', newPassword: 'Fresh-Password-42' },
        remoteAddress,
      })
      expectProblem(reset, 429, 'RATE_LIMITED')
    })
    await app.passwordRecovery.settled()
    expect(await storedCode(bed.owner, member.id, 'PASSWORD_RESET')).toBeUndefined()
  })
})
