import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { admitUserAttempt } from '../../db/repos/sign-in/login-admission.js'
import { clearUserLoginFailures } from '../../db/repos/sign-in/login-guards.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { createTenant, insertUser, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

describe("a user's login-failure count is a tenant row", () => {
  const app = useTestApp()
  const limits = { maxFailures: 3, lockSeconds: 60 }

  async function userOfAnotherTenant() {
    const home = await createTenant()
    const other = await createTenant()
    const user = await insertUser(other)
    return { home, other, key: { tenantId: other.id, userId: user.id } }
  }

  const failuresOf = (key: { tenantId: number; userId: number }) =>
    owner().selectFrom('userLoginFailures').select('failures').where('tenantId', '=', key.tenantId).where('userId', '=', key.userId).execute()

  it("cannot be counted from another tenant's transaction", async () => {
    const { home, key } = await userOfAnotherTenant()
    await expect(withTenant(app.current.db, home.id, (trx) => admitUserAttempt(trx, key, limits))).rejects.toThrow(/row-level security/)
    expect(await failuresOf(key)).toEqual([])
  })

  it("cannot be forgiven from another tenant's transaction", async () => {
    const { home, other, key } = await userOfAnotherTenant()
    await withTenant(app.current.db, other.id, (trx) => admitUserAttempt(trx, key, limits))
    await withTenant(app.current.db, home.id, (trx) => clearUserLoginFailures(trx, key))
    expect(await failuresOf(key)).toEqual([{ failures: 1 }])
  })

  it("leaves the caller's tenant binding as it was after a login admission bound the tenant it names", async () => {
    const { home, other } = await userOfAnotherTenant()
    const portalUser = await insertUser(other)
    const bound = await withTenant(app.current.db, home.id, async (trx) => {
      await sql`select * from svc_login_admit('x', ${portalUser.userLoginId}, 3, 60, ${other.customId}, null)`.execute(trx)
      return (await sql<{ tenant: string }>`select current_setting('app.tenant_id', true) as tenant`.execute(trx)).rows[0]!.tenant
    })
    expect(bound).toBe(String(home.id))
    expect(await failuresOf({ tenantId: other.id, userId: portalUser.id })).toEqual([{ failures: 1 }])
  })
})
