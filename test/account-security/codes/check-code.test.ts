import { createSecretKey, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { replaceCode } from '../../../db/repos/account-security/one-time-codes.js'
import { withTenant } from '../../../db/tenant-transaction.js'
import { AppError } from '../../../lib/errors.js'
import { checkCode, countFailedTry, useUpCode } from '../../../lib/account-security/codes/check-code.js'
import { hashCode, type CodeBinding } from '../../../lib/account-security/codes/codes.js'
import { issueCode } from '../../../lib/account-security/codes/issue-code.js'
import type { OneTimeCodeSettings } from '../../../lib/account-security/codes/settings.js'
import { systemSmsSettings } from '../../../lib/dispatch/system-messages.js'
import { createTenant, insertUser, owner } from '../../support/fixtures.js'
import { uniquePhone } from '../recovery-bed.js'
import { itConcurrent, useTestApp } from '../../support/helper.js'

const app = useTestApp()

const settings: OneTimeCodeSettings = {
  key: createSecretKey(randomBytes(32)),
  ttlSeconds: 300,
  maxAttempts: 3,
  resendSeconds: 60,
  dailyLimit: 2,
  tenantDailyVerifications: 200,
  phoneChangeHoldHours: 24,
  timeZone: 'Asia/Seoul',
}

const phone = () => uniquePhone()

/** A user of a fresh tenant with a phone, and the binding of its PHONE_VERIFICATION slot. */
async function slot(): Promise<CodeBinding> {
  const tenant = await createTenant()
  const user = await insertUser(tenant)
  const number = phone()
  await owner().updateTable('users').set({ phone: number }).where('id', '=', user.id).execute()
  return { tenantId: tenant.id, userId: user.id, purpose: 'PHONE_VERIFICATION', phone: number }
}

/** Another user's PHONE_VERIFICATION slot in the tenant, for `number`. */
async function slotIn(tenantId: number, number: string): Promise<CodeBinding> {
  const user = await insertUser({ id: tenantId })
  await owner().updateTable('users').set({ phone: number }).where('id', '=', user.id).execute()
  return { tenantId, userId: user.id, purpose: 'PHONE_VERIFICATION', phone: number }
}

/** Stores `code` in the slot as issuing would, without an SMS. */
const store = (binding: CodeBinding, code: string, resendSeconds = settings.resendSeconds) =>
  withTenant(app.current.db, binding.tenantId, (trx) =>
    replaceCode(trx, { ...binding, codeHash: hashCode(settings.key, binding, code), ttlSeconds: settings.ttlSeconds, resendSeconds }),
  )

/** Checks `code` in a transaction of its own that commits, then uses it up when valid, as the flows do. */
const check = (binding: CodeBinding, code: string) =>
  withTenant(app.current.db, binding.tenantId, async (trx) => {
    const result = await checkCode(trx, settings, binding, code)
    if (result === 'valid') await useUpCode(trx, binding)
    return result
  })

const row = (binding: CodeBinding) =>
  owner().selectFrom('oneTimeCodes').selectAll().where('userId', '=', binding.userId).where('purpose', '=', binding.purpose).executeTakeFirst()

describe('checking a one-time code (lib/account-security/codes/check-code.ts)', () => {
  it('takes the right code once: used up, it is gone', async () => {
    const binding = await slot()
    expect(await store(binding, '042917')).toEqual({ expiresAt: expect.any(Date) })
    expect(await check(binding, '042917')).toBe('valid')
    expect(await row(binding)).toBeUndefined()
    expect(await check(binding, '042917')).toBe('none')
  })

  it('counts wrong codes and lets the code die at the maximum: the right one then fails too', async () => {
    const binding = await slot()
    await store(binding, '042917')
    expect(await check(binding, '111111')).toBe('wrong')
    expect(await check(binding, '222222')).toBe('wrong')
    expect((await row(binding))?.attempts).toBe(2)
    expect(await check(binding, '333333')).toBe('wrong')
    expect(await check(binding, '042917')).toBe('none')
  })

  it('counts a valid code presented without the rest as a wrong try, keeping it live', async () => {
    const binding = await slot()
    await store(binding, '042917')
    await withTenant(app.current.db, binding.tenantId, async (trx) => {
      expect(await checkCode(trx, settings, binding, '042917')).toBe('valid')
      await countFailedTry(trx, binding)
    })
    expect((await row(binding))?.attempts).toBe(1)
    expect(await check(binding, '042917')).toBe('valid')
  })

  it('refuses and deletes an expired code, and one sent to a number that is no longer the binding', async () => {
    const expired = await slot()
    await store(expired, '042917')
    await owner().updateTable('oneTimeCodes').set({ expiresAt: new Date(Date.now() - 1000) }).where('userId', '=', expired.userId).execute()
    expect(await check(expired, '042917')).toBe('none')
    expect(await row(expired)).toBeUndefined()

    const moved = await slot()
    await store(moved, '042917')
    expect(await check({ ...moved, phone: phone() }, '042917')).toBe('none')
    expect(await row(moved)).toBeUndefined()
  })

  it('finds nothing in the slot of another purpose, user or tenant', async () => {
    const binding = await slot()
    const other = await slot()
    await store(binding, '042917')
    expect(await check({ ...binding, purpose: 'PASSWORD_RESET' }, '042917')).toBe('none')
    expect(await check({ ...other, phone: binding.phone }, '042917')).toBe('none')
    // RLS: the same user id under another tenant's binding sees no row.
    expect(await check({ ...binding, tenantId: other.tenantId }, '042917')).toBe('none')
    expect((await row(binding))?.attempts).toBe(0)
  })

  it('replaces a code only after its resend interval, and the replacement starts with no tries', async () => {
    const binding = await slot()
    await store(binding, '042917')
    expect(await check(binding, '111111')).toBe('wrong')
    const refused = await store(binding, '555555')
    expect(refused).toMatchObject({ expiresAt: null })
    expect('secondsToResend' in refused && refused.secondsToResend).toBeGreaterThanOrEqual(59)
    expect(await check(binding, '042917')).toBe('valid')

    await store(binding, '042917', 0)
    expect(await check(binding, '111111')).toBe('wrong')
    expect(await store(binding, '555555')).toEqual({ expiresAt: expect.any(Date) })
    expect((await row(binding))?.attempts).toBe(0)
    expect(await check(binding, '042917')).toBe('wrong')
    expect(await check(binding, '555555')).toBe('valid')
  })

  itConcurrent('lets exactly one of two simultaneous checks of one code succeed', async () => {
    for (let round = 0; round < 5; round++) {
      const binding = await slot()
      await store(binding, '042917')
      const results = await Promise.all([check(binding, '042917'), check(binding, '042917')])
      expect(results.sort()).toEqual(['none', 'valid'])
    }
  })
})

describe('issuing a one-time code (lib/account-security/codes/issue-code.ts)', () => {
  const issuing = () => ({ codes: settings, sms: systemSmsSettings(app.current.env) })
  const issue = (binding: CodeBinding) =>
    withTenant(app.current.db, binding.tenantId, (trx) => issueCode(trx, issuing(), { ...binding, tenantName: 'Academy' }))

  async function refusal(promise: Promise<unknown>): Promise<AppError> {
    const error = await promise.then(() => null, (caught: unknown) => caught)
    expect(error).toBeInstanceOf(AppError)
    return error as AppError
  }

  it('queues one code SMS to the phone and keeps only the hash of the code it carries', async () => {
    const binding = await slot()
    const issued = await issue(binding)
    // Read after the commit (the quota's reservation is the issuing transaction's last statement): no dispatcher
    // hands messages over and erases their text on this database, dispatch runs on databases of its own
    // (test/support/isolated-database.ts).
    const queued = await owner()
      .selectFrom('smsMessages')
      .innerJoin('smsRecipients', 'smsRecipients.smsId', 'smsMessages.id')
      .select(['smsMessages.kind', 'smsMessages.content', 'smsMessages.discardAfter', 'smsRecipients.phone'])
      .where('smsMessages.tenantId', '=', binding.tenantId)
      .execute()
    expect(issued).toEqual({ expiresIn: 300, resendAfter: 60 })
    expect(queued).toHaveLength(1)
    expect(queued[0]).toMatchObject({ kind: 'VERIFICATION_CODE', phone: binding.phone })
    const code = /인증번호 ([0-9]{6}) /.exec(queued[0]!.content)![1]!
    const stored = await row(binding)
    expect(stored!.codeHash).toBe(hashCode(settings.key, binding, code))
    expect(queued[0]!.discardAfter?.getTime()).toBe(stored!.expiresAt.getTime())
    expect(await check(binding, code)).toBe('valid')
  })

  it('refuses within the resend interval with Retry-After, rolling back everything it counted', async () => {
    const binding = await slot()
    await issue(binding)
    const refused = await refusal(issue(binding))
    expect(refused.code).toBe('OTP_RATE_LIMITED')
    expect(Number(refused.extra.headers?.['retry-after'])).toBeGreaterThanOrEqual(59)
    const days = await owner().selectFrom('oneTimeCodeDays').select('codes').where('userId', '=', binding.userId).execute()
    expect(days).toEqual([{ codes: 1 }])
  })

  it('refuses beyond the daily limit of the user, and of a verified phone number across tenants, until local midnight', async () => {
    const binding = { ...(await slot()), purpose: 'PASSWORD_RESET' as const }
    for (let sent = 0; sent < settings.dailyLimit; sent++) {
      await issue(binding)
      await owner().updateTable('oneTimeCodes').set({ resendAfter: new Date(0) }).where('userId', '=', binding.userId).execute()
    }
    const perUser = await refusal(issue(binding))
    expect(perUser).toMatchObject({ code: 'OTP_RATE_LIMITED', detail: 'Too many codes today for this account.' })
    expect(Number(perUser.extra.headers?.['retry-after'])).toBeGreaterThan(60)

    const elsewhere = { ...(await slot()), purpose: 'MFA_SMS' as const, phone: binding.phone }
    const perPhone = await refusal(issue(elsewhere))
    expect(perPhone).toMatchObject({ code: 'OTP_RATE_LIMITED', detail: 'Too many codes today for this phone number.' })
    // Refused, so not counted for the other user either, and nothing stored.
    expect(await owner().selectFrom('oneTimeCodeDays').select('codes').where('userId', '=', elsewhere.userId).execute()).toEqual([])
    expect(await row(elsewhere)).toBeUndefined()

    // A code that verifies the number counts in its own tenant only: what other tenants sent does not refuse it.
    const verifying = { ...(await slot()), phone: binding.phone }
    expect(await issue(verifying)).toEqual({ expiresIn: 300, resendAfter: 60 })
  })

  it('counts codes that verify a number per tenant and number, and in the tenant’s daily total', async () => {
    const first = await slot()
    const sameNumber = await slotIn(first.tenantId, first.phone)
    await issue(first)
    await issue(sameNumber)
    const third = await slotIn(first.tenantId, first.phone)
    expect(await refusal(issue(third))).toMatchObject({ code: 'OTP_RATE_LIMITED', detail: 'Too many codes today for this phone number.' })

    const tight = { ...settings, tenantDailyVerifications: 3 }
    const issueTight = (binding: CodeBinding) =>
      withTenant(app.current.db, binding.tenantId, (trx) => issueCode(trx, { codes: tight, sms: systemSmsSettings(app.current.env) }, { ...binding, tenantName: 'Academy' }))
    const tenant = (await slot()).tenantId
    for (let user = 0; user < 3; user++) await issueTight(await slotIn(tenant, phone()))
    expect(await refusal(issueTight(await slotIn(tenant, phone())))).toMatchObject({
      code: 'OTP_RATE_LIMITED',
      detail: 'Too many phone verifications today in this academy.',
    })
    // Another tenant's total is its own.
    expect(await issueTight(await slot())).toEqual({ expiresIn: 300, resendAfter: 60 })
  })
})
