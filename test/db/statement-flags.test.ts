import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { expect } from 'vitest'
import { APP_ROLE, DEFAULT_STATEMENT_TIMEOUT_MS } from '../../db/database.js'
import { precompiled } from '../../db/driver/precompiled.js'
import { endsReadOnlyTransaction, executeHeld, planOnce, planPerExecution } from '../../db/driver/statement-flags.js'
import { openingStatements, openRequestTransaction, tenantBindingStatement, withTenant } from '../../db/tenant-transaction.js'
import { createTenant, insertUser } from '../support/fixtures.js'
import { describePipelined, itPipelined, useTestApp } from '../support/helper.js'
import { connectionOf, recordExchanges, recordQueries, sessionQuery } from '../support/statement-recorder.js'

const SESSION = { role: APP_ROLE, statementTimeoutMs: DEFAULT_STATEMENT_TIMEOUT_MS }
const opening = (readOnly: boolean) => openingStatements(SESSION, readOnly).map((query) => query.sql)

/** db/driver/statement-flags.ts: what a repository asks of the pipelined driver, by flag and never by SQL text. */
describePipelined('statement flags', () => {
  const app = useTestApp()

  itPipelined('holds a statement flagged held, and no statement for the text of its comment', async () => {
    const tenant = await createTenant()
    const commented = 'select 1 as commented /* sent with the next statement */'
    const exchanges = await recordExchanges(() =>
      withTenant(app.current.db, tenant.id, async (trx) => {
        await sql.raw(commented).execute(trx)
        await executeHeld(trx, sql`select ${2}::int as held`)
        await sql`select 3 as next`.execute(trx)
      }),
    )
    expect(exchanges).toEqual([
      [...opening(false), tenantBindingStatement(tenant.id).sql, commented],
      ['select $1::int as held', 'select 3 as next'],
      ['commit'],
    ])
  })

  itPipelined('carries the commit with a flagged last read of a read-only transaction, on every run of a precompiled read', async () => {
    const tenant = await createTenant()
    const user = await insertUser(tenant)
    const read = precompiled((_db, params: { n: number }) =>
      endsReadOnlyTransaction(sql<{ n: number }>`select ${params.n}::int as n`),
    )
    for (const n of [1, 2]) {
      const scope = { tenantId: tenant.id, accessJti: randomUUID(), userId: user.id, readOnly: true }
      const exchanges = await recordExchanges(async () => {
        const transaction = await openRequestTransaction(app.current.db, scope)
        expect(await read(transaction.db, { n })).toEqual([{ n }])
        expect(await transaction.end('commit')).toEqual({ outcome: 'committed' })
      })
      const scopeStatement = expect.stringMatching(/^select svc_request_scope\(/)
      expect(exchanges).toEqual([[...opening(true), scopeStatement, 'select $1::int as n', 'commit']])
    }
  })

  itPipelined('prepares a statement unless its compilation is flagged planned per execution', async () => {
    const alias = `planned_${randomUUID().slice(0, 8)}`
    const built = sql`select ${1}::int as ${sql.raw(alias)}`
    const { queries } = await recordQueries(async () => {
      await built.execute(app.current.db)
      await planPerExecution(built).execute(app.current.db)
      // The flag belongs to the flagged compilation only, not to the builder it came from.
      await built.execute(app.current.db)
    })
    const runs = queries.filter((recorded) => recorded.text === `select $1::int as ${alias}`)
    expect(runs.map((recorded) => recorded.name !== undefined)).toEqual([true, false, true])
  })
})

describePipelined('statements flagged planOnce', () => {
  const app = useTestApp()

  itPipelined('run from their generic plan from the first run, and what follows them as configured again', async () => {
    const tenant = await createTenant()
    const alias = `once_${randomUUID().slice(0, 8)}`
    const flagged = (id: number) => planOnce(sql<{ n: string }>`select count(*) as ${sql.raw(alias)} from tenants where id = ${id}`)
    const text = `select count(*) as ${alias} from tenants where id = $1`
    const settings: string[] = []
    const plans: unknown[] = []
    const exchanges = await recordExchanges(() =>
      withTenant(app.current.db, tenant.id, async (trx) => {
        for (let run = 0; run < 2; run++) {
          await flagged(tenant.id).execute(trx)
          await flagged(tenant.id).execute(trx)
          const { rows } = await sql<{ mode: string }>`select current_setting('plan_cache_mode') as mode`.execute(trx)
          settings.push(rows[0]!.mode)
        }
        const { rows } = await sql<{ generic: number; custom: number }>`
          select generic_plans as generic, custom_plans as custom from pg_prepared_statements where statement = ${text}`.execute(trx)
        plans.push(...rows)
      }),
    )
    // PostgreSQL alone would plan the first five runs for their values.
    expect(plans).toEqual([{ generic: 4, custom: 0 }])
    expect(settings).toEqual(['auto', 'auto'])
    const switched = exchanges.flat().filter((statement) => statement.includes('plan_cache_mode ='))
    expect(switched).toEqual(['set local plan_cache_mode = force_generic_plan', 'set local plan_cache_mode = force_generic_plan'])
    expect(exchanges.flat().filter((statement) => statement === 'set local plan_cache_mode to default')).toHaveLength(2)
    expect(exchanges[0]).toEqual([...opening(false), tenantBindingStatement(tenant.id).sql, 'set local plan_cache_mode = force_generic_plan', text])
  })

  itPipelined('leaves nothing set on the connection after the transaction', async () => {
    const tenant = await createTenant()
    const connection = await connectionOf(() =>
      withTenant(app.current.db, tenant.id, (trx) => planOnce(sql`select count(*) from tenants where id = ${tenant.id}`).execute(trx)),
    )
    expect((await sessionQuery(connection, "select current_setting('plan_cache_mode') as mode")).rows).toEqual([{ mode: 'auto' }])
  })
})
