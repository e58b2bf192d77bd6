import { sql } from 'kysely'
import { createSecretKey, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { countPhoneCode, countUserCode } from '../../../db/repos/account-security/one-time-code-limits.js'
import { replaceCode } from '../../../db/repos/account-security/one-time-codes.js'
import { replacePhone, updateName } from '../../../db/repos/tenancy/users.js'
import { withTenant } from '../../../db/tenant-transaction.js'
import { hashCode, phoneKeyOf, type CodeBinding } from '../../../lib/account-security/codes/codes.js'
import { createTenant, insertUser, owner } from '../../support/fixtures.js'
import { uniquePhone } from '../recovery-bed.js'
import { itPostgres, useTestApp } from '../../support/helper.js'

const app = useTestApp()
const key = createSecretKey(randomBytes(32))
/** PostgreSQL's insufficient_privilege. */
const DENIED = { code: '42501' }

async function userWithCode(phone = uniquePhone()) {
  const tenant = await createTenant()
  const user = await insertUser(tenant)
  await owner().updateTable('users').set({ phone }).where('id', '=', user.id).execute()
  // A statement of its own: one that changes the phone clears the mark, whatever else it sets.
  await owner().updateTable('users').set({ phoneVerifiedAt: new Date() }).where('id', '=', user.id).execute()
  const binding: CodeBinding = { tenantId: tenant.id, userId: user.id, purpose: 'PHONE_VERIFICATION', phone }
  await withTenant(app.current.db, tenant.id, (trx) =>
    replaceCode(trx, { ...binding, codeHash: hashCode(key, binding, '042917'), ttlSeconds: 300, resendSeconds: 60 }),
  )
  return { tenant, user, binding }
}

const codesOf = (userId: number) => owner().selectFrom('oneTimeCodes').select('purpose').where('userId', '=', userId).execute()
const verifiedAt = async (userId: number) =>
  (await owner().selectFrom('users').select('phoneVerifiedAt').where('id', '=', userId).executeTakeFirstOrThrow()).phoneVerifiedAt

describe('the one-time code tables', () => {
  it("keep one tenant's codes and daily counts out of another's transactions", async () => {
    const victim = await userWithCode()
    const home = await createTenant()
    const seen = await withTenant(app.current.db, home.id, async (trx) => ({
      codes: await trx.selectFrom('oneTimeCodes').select('userId').where('userId', '=', victim.user.id).execute(),
      deleted: (await trx.deleteFrom('oneTimeCodes').where('userId', '=', victim.user.id).executeTakeFirst()).numDeletedRows,
    }))
    expect(seen).toEqual({ codes: [], deleted: 0n })
    expect(await codesOf(victim.user.id)).toEqual([{ purpose: 'PHONE_VERIFICATION' }])
    await expect(
      withTenant(app.current.db, home.id, (trx) => countUserCode(trx, { tenantId: victim.tenant.id, userId: victim.user.id }, 10, 'Asia/Seoul')),
    ).rejects.toThrow(/row-level security/)
    await expect(
      withTenant(app.current.db, home.id, (trx) =>
        replaceCode(trx, { ...victim.binding, codeHash: 'x', ttlSeconds: 300, resendSeconds: 0 }),
      ),
    ).rejects.toThrow(/row-level security/)
  })

  it('count a phone number across tenants in one row per local day', async () => {
    const phoneKey = phoneKeyOf(key, '01098765432')
    const first = await createTenant()
    const second = await createTenant()
    expect(await withTenant(app.current.db, first.id, (trx) => countPhoneCode(trx, phoneKey, 2, 'Asia/Seoul'))).toEqual({ counted: true })
    expect(await withTenant(app.current.db, second.id, (trx) => countPhoneCode(trx, phoneKey, 2, 'Asia/Seoul'))).toEqual({ counted: true })
    const refused = await withTenant(app.current.db, second.id, (trx) => countPhoneCode(trx, phoneKey, 2, 'Asia/Seoul'))
    expect(refused).toMatchObject({ counted: false, secondsToNextDay: expect.any(Number) })
    const rows = await owner().selectFrom('oneTimeCodePhoneDays').select(['codes', sql<string>`day::text`.as('day')]).where('phoneKey', '=', phoneKey).execute()
    const { rows: today } = await sql<{ day: string }>`select (now() at time zone 'Asia/Seoul')::date::text as day`.execute(owner())
    expect(rows).toEqual([{ codes: 2, day: today[0]!.day }])
  })

  itPostgres('let the runtime role neither delete nor empty the daily counts (only the purge does)', async () => {
    const { tenant, user } = await userWithCode()
    await withTenant(app.current.db, tenant.id, (trx) => countUserCode(trx, { tenantId: tenant.id, userId: user.id }, 10, 'Asia/Seoul'))
    await expect(sql`delete from one_time_code_phone_days`.execute(app.current.db)).rejects.toMatchObject(DENIED)
    await expect(sql`truncate one_time_code_phone_days`.execute(app.current.db)).rejects.toMatchObject(DENIED)
    await expect(withTenant(app.current.db, tenant.id, (trx) => sql`delete from one_time_code_days`.execute(trx))).rejects.toMatchObject(DENIED)
  })

  it("clear the verification and every live code with a change of phone, whoever writes it; the same number keeps both", async () => {
    const { tenant, user, binding } = await userWithCode()
    await withTenant(app.current.db, tenant.id, (trx) =>
      replaceCode(trx, { ...binding, purpose: 'PASSWORD_RESET', codeHash: 'x', ttlSeconds: 300, resendSeconds: 60 }),
    )
    await withTenant(app.current.db, tenant.id, async (trx) => {
      await replacePhone(trx, user.id, binding.phone)
      await updateName(trx, user.id, 'Renamed')
    })
    expect(await verifiedAt(user.id)).not.toBeNull()
    expect(await codesOf(user.id)).toHaveLength(2)

    // As an operator or an older release would write it: the trigger is what clears them, even when the same
    // statement claims the new number verified.
    await withTenant(app.current.db, tenant.id, (trx) =>
      sql`update users set phone = '01033334444', phone_verified_at = now() where id = ${user.id}`.execute(trx),
    )
    expect(await verifiedAt(user.id)).toBeNull()
    expect(await codesOf(user.id)).toEqual([])

    await owner().updateTable('users').set({ phoneVerifiedAt: new Date() }).where('id', '=', user.id).execute()
    await withTenant(app.current.db, tenant.id, (trx) => replacePhone(trx, user.id, null))
    expect(await verifiedAt(user.id)).toBeNull()
  })

  it('are purged every minute: expired codes, and daily counts older than yesterday', async () => {
    const expired = await userWithCode()
    const live = await userWithCode()
    await owner().updateTable('oneTimeCodes').set({ expiresAt: new Date(Date.now() - 1000) }).where('userId', '=', expired.user.id).execute()
    const oldKey = `old-${randomBytes(4).toString('hex')}`
    const todayKey = `today-${randomBytes(4).toString('hex')}`
    await owner().insertInto('oneTimeCodePhoneDays').values([
      { phoneKey: oldKey, day: '2000-01-01', codes: 1 },
      { phoneKey: todayKey, day: new Date().toISOString().slice(0, 10), codes: 1 },
    ]).execute()
    await owner().insertInto('oneTimeCodeDays').values({ tenantId: live.tenant.id, userId: live.user.id, day: '2000-01-01', codes: 3 }).execute()

    await app.current.purgeExpired()
    expect(await codesOf(expired.user.id)).toEqual([])
    expect(await codesOf(live.user.id)).toEqual([{ purpose: 'PHONE_VERIFICATION' }])
    const phoneDays = await owner().selectFrom('oneTimeCodePhoneDays').select('phoneKey').where('phoneKey', 'in', [oldKey, todayKey]).execute()
    expect(phoneDays).toEqual([{ phoneKey: todayKey }])
    expect(await owner().selectFrom('oneTimeCodeDays').select('codes').where('userId', '=', live.user.id).execute()).toEqual([])
  })
})
