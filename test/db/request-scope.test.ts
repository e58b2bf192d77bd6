import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { requestScopeStatement, withServiceTransaction } from '../../db/tenant-transaction.js'
import { createTenant, insertUser, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

/** The request scope statement (svc_request_scope) as the runtime role: what it binds and what it refuses. */
describe('the request scope', () => {
  const app = useTestApp()

  /** Opens the scope in a transaction of the app's runtime pool and reads back what it bound. */
  async function scoped(tenantId: number, jti: string | null, userId: number | null): Promise<string | null> {
    return withServiceTransaction(app.current.db, async (trx) => {
      await trx.executeQuery(requestScopeStatement({ tenantId, accessJti: jti, userId }))
      const { rows } = await sql<{ tenant: string | null }>`select current_setting('app.tenant_id', true) as tenant`.execute(trx)
      return rows[0]!.tenant
    })
  }

  const sqlState = (promise: Promise<unknown>) =>
    promise.then(
      () => 'none',
      (error: { code?: string }) => error.code,
    )

  it('binds the tenant for an active user of an active tenant', async () => {
    const tenant = await createTenant()
    const user = await insertUser(tenant)
    expect(await scoped(tenant.id, randomUUID(), user.id)).toBe(String(tenant.id))
  })

  it('binds only the tenant for a signed internal call (no user, no token)', async () => {
    const tenant = await createTenant({ status: 'SUSPENDED' })
    expect(await scoped(tenant.id, null, null)).toBe(String(tenant.id))
  })

  it('refuses a revoked token (SV004), a suspended tenant (SV010) and a suspended user (SV015)', async () => {
    const tenant = await createTenant()
    const user = await insertUser(tenant)
    const jti = randomUUID()
    await owner().insertInto('revokedAccessTokens').values({ jti, expiresAt: new Date(Date.now() + 60_000) }).execute()
    expect(await sqlState(scoped(tenant.id, jti, user.id))).toBe('SV004')

    const suspendedTenant = await createTenant({ status: 'SUSPENDED' })
    const member = await insertUser(suspendedTenant)
    expect(await sqlState(scoped(suspendedTenant.id, randomUUID(), member.id))).toBe('SV010')

    await owner().updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', user.id).execute()
    expect(await sqlState(scoped(tenant.id, randomUUID(), user.id))).toBe('SV015')
  })

  it('refuses a user of another tenant and a tenant that does not exist as unknown (SV003)', async () => {
    const tenant = await createTenant()
    const stranger = await insertUser(await createTenant())
    expect(await sqlState(scoped(tenant.id, randomUUID(), stranger.id))).toBe('SV003')
    expect(await sqlState(scoped(2 ** 40, randomUUID(), stranger.id))).toBe('SV003')
  })
})
