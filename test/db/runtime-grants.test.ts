import { sql } from 'kysely'
import { describe, expect } from 'vitest'
import { changeUserLoginId } from '../../db/repos/tenancy/users.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { registerOwner } from '../support/auth-fixtures.js'
import { createTenant, owner, unique } from '../support/fixtures.js'
import { itPostgres, useTestApp } from '../support/helper.js'

/** PostgreSQL's insufficient_privilege. */
const DENIED = { code: '42501' }

/**
 * tenants and owner_directory have no RLS (they are read before any tenant is known), so privileges are all that
 * stands between the runtime role and every tenant's row there. The runtime only registers (inserts) and renames an
 * owner (through its users row, which RLS confines to the caller's tenant); nothing else.
 */
describe('what the runtime role may write in the tables without RLS', () => {
  const app = useTestApp()
  const asRuntime = (statement: ReturnType<typeof sql>) => statement.execute(app.current.db)

  itPostgres('cannot suspend, rename or delete any tenant', async () => {
    const victim = await createTenant()
    await expect(asRuntime(sql`update tenants set status = 'SUSPENDED' where id = ${victim.id}`)).rejects.toMatchObject(DENIED)
    await expect(asRuntime(sql`update tenants set name = 'taken over' where id = ${victim.id}`)).rejects.toMatchObject(DENIED)
    await expect(asRuntime(sql`delete from tenants where id = ${victim.id}`)).rejects.toMatchObject(DENIED)
    const row = await owner().selectFrom('tenants').select(['status', 'name']).where('id', '=', victim.id).executeTakeFirstOrThrow()
    expect(row).toEqual({ status: victim.status, name: victim.name })
  })

  itPostgres("cannot take over or remove another tenant's owner entry", async () => {
    const victim = await registerOwner(app.current)
    expect(victim.response.statusCode).toBe(201)
    const tenantId = victim.user.tenantId
    const stolen = unique('stolen')
    await expect(
      asRuntime(sql`update owner_directory set user_login_id = ${stolen}, login_key = ${stolen} where tenant_id = ${tenantId}`),
    ).rejects.toMatchObject(DENIED)
    await expect(asRuntime(sql`update owner_directory set user_id = user_id where tenant_id = ${tenantId}`)).rejects.toMatchObject(DENIED)
    await expect(asRuntime(sql`delete from owner_directory where tenant_id = ${tenantId}`)).rejects.toMatchObject(DENIED)
    const entry = await owner().selectFrom('ownerDirectory').select('userLoginId').where('tenantId', '=', tenantId).execute()
    expect(entry).toEqual([{ userLoginId: victim.user.userLoginId }])
  })

  itPostgres('can neither read nor write the API key directory, and learns ids only through its function', async () => {
    const tenant = await createTenant()
    await expect(asRuntime(sql`select * from api_key_directory`)).rejects.toMatchObject(DENIED)
    await expect(asRuntime(sql`insert into api_key_directory values ('x', ${tenant.id}, 1)`)).rejects.toMatchObject(DENIED)
    await expect(asRuntime(sql`delete from api_key_directory`)).rejects.toMatchObject(DENIED)
    const { rows } = await asRuntime(sql`select * from svc_api_key_directory('no-such-lookup-id')`)
    expect(rows).toEqual([])
  })

  itPostgres("still registers owners and renames an owner's entry through the owner's own users row", async () => {
    const first = await registerOwner(app.current)
    const second = await registerOwner(app.current)
    expect([first.response.statusCode, second.response.statusCode]).toEqual([201, 201])
    const renamed = unique('renamed-owner')

    expect(await withTenant(app.current.db, first.user.tenantId, (trx) => changeUserLoginId(trx, first.user.id, renamed))).toBe(true)
    // A user id of another tenant is invisible under RLS: nothing of that tenant changes.
    expect(await withTenant(app.current.db, first.user.tenantId, (trx) => changeUserLoginId(trx, second.user.id, unique('x')))).toBe(false)

    const entries = await owner()
      .selectFrom('ownerDirectory')
      .select(['tenantId', 'userLoginId', 'loginKey'])
      .where('tenantId', 'in', [first.user.tenantId, second.user.tenantId])
      .orderBy('tenantId')
      .execute()
    expect(entries).toEqual([
      { tenantId: first.user.tenantId, userLoginId: renamed, loginKey: renamed.toLowerCase() },
      { tenantId: second.user.tenantId, userLoginId: second.user.userLoginId, loginKey: expect.any(String) },
    ])
  })
})
