import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { describe, expect, inject, it } from 'vitest'
import { openPostgres } from '../../db/database.js'
import { RequestScopeRefused } from '../../db/errors.js'
import { endsReadOnlyTransaction } from '../../db/driver/statement-flags.js'
import { openRequestTransaction, type TenantTx, withRequestTransaction } from '../../db/tenant-transaction.js'
import { createTenant, insertUser, owner, unique } from '../support/fixtures.js'
import { until } from '../support/auth-fixtures.js'
import { itPipelined, useTestApp } from '../support/helper.js'
import { startTcpProxy } from '../support/tcp-proxy.js'

/** db/tenant-transaction.ts: the one function that ends a request transaction, and what it reports. */
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

  // The pipelined driver holds the scope statement for the request's next one; the others raise it at once.
  itPipelined('reports refused when the token was revoked and the request sent no statement, on commit or rollback', async () => {
    const { scope } = await caller()
    await revoke(scope.accessJti)
    for (const wanted of ['commit', 'rollback'] as const) {
      const transaction = await openRequestTransaction(app.current.db, scope)
      expect(await transaction.end(wanted)).toEqual({ outcome: 'refused', refusal: 'revoked' })
    }
  })

  for (const preparedStatements of [true, false]) {
    itPipelined(`ends a transaction whose last read is still on the wire only after its answer, so the connection's next user starts clean (prepared statements ${preparedStatements ? 'on' : 'off'})`, async () => {
      // One connection, through a proxy that can hold the server's answers.
      const target = new URL(inject('runtimeDatabaseUrl'))
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
      const name = `svc_end_waits_${preparedStatements}`
      const url = new URL(proxy.through(target.toString()))
      url.searchParams.set('application_name', name)
      const database = openPostgres(url.toString(), 1, { preparedStatements })
      const lastStatement = async () =>
        (await sql<{ query: string }>`select query from pg_stat_activity where application_name = ${name}`.execute(owner())).rows[0]?.query
      try {
        const { scope } = await caller()
        const transaction = await openRequestTransaction(database.db, { ...scope, readOnly: true })
        proxy.holdReplies()
        const read = endsReadOnlyTransaction(sql<{ n: number }>`select ${7}::int as n`).execute(transaction.db)
        // The server has run the read (its batch ends with the commit); its answer is held.
        await until(async () => (await lastStatement()) === 'commit')
        // As when a client hangs up: the request's safety net ends the transaction while its read is on the wire.
        const ended = transaction.end('rollback')
        // The end writes nothing before the read's answer has arrived and been taken in (an end that did not wait
        // reached the server at once; when both answers then arrived together, the client took in the read's after
        // the connection had gone back to the pool, and refused its next user's statements).
        const endReachedServer = await until(async () => (await lastStatement()) === 'rollback', 300).then(
          () => true,
          () => false,
        )
        expect(endReachedServer).toBe(false)
        proxy.releaseReplies()
        expect((await read).rows).toEqual([{ n: 7 }])
        expect(await ended).toEqual({ outcome: 'rolled-back' })
        const next = await openRequestTransaction(database.db, scope)
        expect((await sql<{ n: number }>`select ${8}::int as n`.execute(next.db)).rows).toEqual([{ n: 8 }])
        expect(await next.end('commit')).toEqual({ outcome: 'committed' })
      } finally {
        proxy.releaseReplies()
        await database.close()
        await proxy.close()
      }
    })
  }

  // Under load requests queue for connections: one whose transaction is over on the server must not hold one while
  // it answers its client. A pool of one connection shows it: the next transaction gets it before the first ends.
  itPipelined('gives the connection back as soon as a read-only transaction’s last read has committed it', async () => {
    const database = openPostgres(inject('runtimeDatabaseUrl'), 1, { connectTimeoutMs: 1000 })
    try {
      const { scope } = await caller()
      const first = await openRequestTransaction(database.db, { ...scope, readOnly: true })
      const read = await endsReadOnlyTransaction(sql<{ n: number }>`select ${1}::int as n`).execute(first.db)
      expect(read.rows).toEqual([{ n: 1 }])
      // Before the first has ended: without the early return this waits for the pool's only connection and times out.
      const second = await openRequestTransaction(database.db, { ...scope, readOnly: true })
      const next = await endsReadOnlyTransaction(sql<{ n: number }>`select ${2}::int as n`).execute(second.db)
      expect(next.rows).toEqual([{ n: 2 }])
      // Its end sends nothing on the connection it no longer has, whichever end the request asks for.
      expect(await first.end('rollback')).toEqual({ outcome: 'rolled-back' })
      expect(await second.end('commit')).toEqual({ outcome: 'committed' })
      await expect(sql`select 1`.execute(first.db)).rejects.toThrow(/has ended/)
      // A writing transaction keeps its connection until it ends: its commit is still to come.
      const writing = await openRequestTransaction(database.db, scope)
      await sql`select 3`.execute(writing.db)
      await expect(openRequestTransaction(database.db, scope).then((t) => t.end('rollback'))).rejects.toThrow(/timeout/i)
      expect(await writing.end('commit')).toEqual({ outcome: 'committed' })
    } finally {
      await database.close()
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
