import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { TenantContextMissing } from '../../db/errors.js'
import { type TenantTx, withTenant } from '../../db/tenant-transaction.js'
import { createTenant, insertUser, owner } from '../support/fixtures.js'
import { itPipelined, openTestDatabase, testEnv, useTestApp } from '../support/helper.js'
import { recordExchanges, RUNTIME_BEGIN, RUNTIME_ROLE, RUNTIME_TIMEOUT } from '../support/statement-recorder.js'

describe('tenant isolation enforced by the database', () => {
  const app = useTestApp()

  async function twoTenants() {
    const a = await createTenant()
    const b = await createTenant()
    const userA = await insertUser(a)
    const userB = await insertUser(b)
    return { a, b, userA, userB }
  }

  it('reads only the current tenant rows', async () => {
    const { a, userA, userB } = await twoTenants()
    const ids = await withTenant(app.current.db, a.id, (trx) =>
      trx.selectFrom('users').select('id').where('id', 'in', [userA.id, userB.id]).execute(),
    )
    expect(ids).toEqual([{ id: userA.id }])
  })

  it('cannot update or delete another tenant row', async () => {
    const { a, userB } = await twoTenants()
    const [updated, deleted] = await withTenant(app.current.db, a.id, async (trx) => [
      await trx.updateTable('users').set({ name: 'hijacked' }).where('id', '=', userB.id).executeTakeFirst(),
      await trx.deleteFrom('users').where('id', '=', userB.id).executeTakeFirst(),
    ])
    expect(updated.numUpdatedRows).toBe(0n)
    expect(deleted.numDeletedRows).toBe(0n)
    const row = await owner().selectFrom('users').select('name').where('id', '=', userB.id).executeTakeFirstOrThrow()
    expect(row.name).toBe('Test User')
  })

  it('refuses to insert a row for another tenant', async () => {
    const { a, b } = await twoTenants()
    await expect(
      withTenant(app.current.db, a.id, (trx) =>
        trx
          .insertInto('users')
          .values({
            tenantId: b.id,
            userLoginId: 'intruder',
            passwordHash: 'x',
            name: 'x',
            role: 'STUDENT',
            avatarSeed: 'x',
            updatedAt: new Date(),
          })
          .execute(),
      ),
    ).rejects.toThrow(/row-level security/)
  })

  it('sees no rows and can write none without a tenant context', async () => {
    const { userA } = await twoTenants()
    const rows = await app.current.db.selectFrom('users').select('id').where('id', '=', userA.id).execute()
    expect(rows).toEqual([])
    await expect(
      app.current.db
        .insertInto('users')
        .values({ tenantId: userA.tenantId, userLoginId: 'nobody', passwordHash: 'x', name: 'x', role: 'STUDENT', avatarSeed: 'x', updatedAt: new Date() })
        .execute(),
    ).rejects.toThrow(/row-level security/)
  })

  it('fails before any data access when the tenant id is missing or invalid', async () => {
    let touched = false
    for (const bad of [0, -1, Number.NaN, null as unknown as number]) {
      await expect(
        withTenant(app.current.db, bad, async () => {
          touched = true
        }),
      ).rejects.toBeInstanceOf(TenantContextMissing)
    }
    expect(touched).toBe(false)
  })

  itPipelined('binds the tenant in the same exchange as the transaction’s first statement', async () => {
    const { a, userA } = await twoTenants()
    const exchanges = await recordExchanges(() =>
      withTenant(app.current.db, a.id, (trx) => trx.selectFrom('users').select('id').where('id', '=', userA.id).execute()),
    )
    // Work outside requests (dispatch, delivery reports, login) runs a transaction per step: a binding of its own
    // would cost each step a round trip.
    expect(exchanges).toHaveLength(2)
    expect(exchanges[0]).toEqual([
      expect.stringMatching(RUNTIME_BEGIN),
      RUNTIME_ROLE,
      expect.stringMatching(RUNTIME_TIMEOUT),
      expect.stringContaining(`select set_config('app.tenant_id', $1, true)`),
      expect.stringContaining('from "users"'),
    ])
    expect(exchanges[1]).toEqual(['commit'])
  })

  it('never carries one tenant into the next use of a pooled connection', async () => {
    const { a, b, userA, userB } = await twoTenants()
    // A single-connection pool (on the embedded store, its one session): every transaction below reuses it.
    const single = openTestDatabase(testEnv({ SVC_DB_POOL_MAX: '1' }))
    try {
      const seen = async (trx: TenantTx) => (await trx.selectFrom('users').select('id').where('id', 'in', [userA.id, userB.id]).execute()).map((row) => row.id)
      expect(await withTenant(single.db, a.id, seen)).toEqual([userA.id])
      const leftover = await sql<{ tenant: string | null }>`select current_setting('app.tenant_id', true) as tenant`.execute(single.db)
      expect(leftover.rows[0]?.tenant ?? '').toBe('')
      expect(await withTenant(single.db, b.id, seen)).toEqual([userB.id])
      const outside = await single.db.selectFrom('users').select('id').where('id', 'in', [userA.id, userB.id]).execute()
      expect(outside).toEqual([])
    } finally {
      await single.close()
    }
  })
})

describe('repository typing', () => {
  it('rejects the root connection where a tenant transaction is required', () => {
    const takesTenantTx = (trx: TenantTx) => trx
    const root = null as unknown as Parameters<typeof withTenant>[0]
    // @ts-expect-error the root Kysely<DB> is not a TenantTx (checked by `npm run typecheck`)
    expect(() => takesTenantTx(root)).not.toThrow()
  })
})
