import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { RequestScopeRefused } from '../../db/errors.js'
import { openRequestTransaction, withRequestTransaction } from '../../db/request-transaction.js'
import { createTenant, insertUser, owner, unique } from '../fixtures.js'
import { itPostgres, useTestApp } from '../helper.js'
import type { TenantTx } from '../../db/tenant.js'

/** db/request-transaction.ts: the one function that ends a request transaction, and what it reports. */
describe('request transaction', () => {
  const app = useTestApp()

  async function caller() {
    const tenant = await createTenant()
    const user = await insertUser(tenant)
    return { tenant, user, scope: { tenantId: tenant.id, accessJti: randomUUID(), userId: user.id } }
  }

  const revoke = (jti: string) =>
    owner().insertInto('revokedAccessTokens').values({ jti, expiresAt: new Date(Date.now() + 60_000) }).execute()

  const templateNamed = (name: string) => owner().selectFrom('smsTemplates').select('id').where('name', '=', name).executeTakeFirst()

  const addTemplate = (trx: TenantTx, tenantId: number, userId: number, name: string) =>
    trx.insertInto('smsTemplates').values({ tenantId, name, content: 'c', category: 'GENERAL', createdBy: userId, updatedAt: new Date() }).execute()

  it.each([
    ['committed', 'visible', 'commit'],
    ['rolled-back', 'gone', 'rollback'],
  ] as const)('reports %s, and the work is %s', async (outcome, work, end) => {
    const { tenant, user, scope } = await caller()
    const transaction = await openRequestTransaction(app.current.db, scope)
    const name = unique(end)
    await addTemplate(transaction.db, tenant.id, user.id, name)
    expect(await transaction.end(end)).toEqual({ outcome })
    expect((await templateNamed(name)) ? 'visible' : 'gone').toBe(work)
  })

  it('refuses a statement through a transaction that has ended, so a kept handle never reaches the pool', async () => {
    const { tenant, user, scope } = await caller()
    const transaction = await openRequestTransaction(app.current.db, scope)
    await transaction.db.selectFrom('users').select('id').where('id', '=', user.id).execute()
    expect(await transaction.end('commit')).toEqual({ outcome: 'committed' })
    const name = unique('late')
    await expect(addTemplate(transaction.db, tenant.id, user.id, name)).rejects.toThrow(/has ended|already committed/)
    expect(await templateNamed(name)).toBeUndefined()
  })

  // PostgreSQL only: there the scope statement waits for the request's next one; the embedded store raises it at once.
  itPostgres('reports refused when the token was revoked and the request sent no statement, on commit or rollback', async () => {
    const { scope } = await caller()
    await revoke(scope.accessJti)
    for (const wanted of ['commit', 'rollback'] as const) {
      const transaction = await openRequestTransaction(app.current.db, scope)
      expect(await transaction.end(wanted)).toEqual({ outcome: 'refused', refusal: 'revoked' })
    }
  })

  it('ends once: a second end answers what the first did', async () => {
    const { scope } = await caller()
    const transaction = await openRequestTransaction(app.current.db, scope)
    const first = await transaction.end('commit')
    expect(await transaction.end('rollback')).toBe(first)
  })

  it('withRequestTransaction throws RequestScopeRefused for a suspended user, whichever statement carried it', async () => {
    const { user, tenant, scope } = await caller()
    await owner().updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', user.id).execute()
    const name = unique('never')
    const attempt = withRequestTransaction(app.current.db, scope, (trx) => addTemplate(trx, tenant.id, user.id, name))
    await expect(attempt).rejects.toBeInstanceOf(RequestScopeRefused)
    await expect(attempt).rejects.toMatchObject({ refusal: 'user-inactive' })
    expect(await templateNamed(name)).toBeUndefined()
    const idle = withRequestTransaction(app.current.db, scope, async () => 'nothing sent')
    await expect(idle).rejects.toMatchObject({ refusal: 'user-inactive' })
  })
})
