import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { DEFAULT_STATEMENT_TIMEOUT_MS, DRIVER_MODES, openPostgres, type Database } from '../../db/database.js'
import { endsReadOnlyTransaction } from '../../db/driver/statement-flags.js'
import {
  APP_ROLE,
  openingStatements,
  openRequestTransaction,
  requestScopeStatement,
  tenantBindingStatement,
  withServiceTransaction,
  withTenant,
} from '../../db/tenant-transaction.js'
import { createTenant, insertUser } from '../support/fixtures.js'
import { describePostgres, itPostgres, useTestApp } from '../support/helper.js'
import {
  recordExchanges,
  recordQueries,
  RUNTIME_BEGIN,
  RUNTIME_ROLE,
  RUNTIME_TIMEOUT,
  type RecordedQuery,
} from '../support/statement-recorder.js'

const SESSION = { role: APP_ROLE, statementTimeoutMs: DEFAULT_STATEMENT_TIMEOUT_MS }
const opening = (readOnly: boolean) => openingStatements(SESSION, readOnly).map((query) => ({ text: query.sql, values: [] }))
const sent = (queries: RecordedQuery[]) => queries.map(({ text, values }) => ({ text, values }))

describe('db/tenant-transaction.ts', () => {
  it('opens with begin, the runtime role and the time limit, set inside the transaction', () => {
    expect(opening(false).map((statement) => statement.text)).toEqual(['begin', RUNTIME_ROLE, expect.stringMatching(RUNTIME_TIMEOUT)])
    expect(opening(true)[0]!.text).toMatch(RUNTIME_BEGIN)
    expect(opening(true)[0]!.text).toBe('begin read only')
  })

  describe('the runtime handle', () => {
    const app = useTestApp()

    // Kysely's own transactions would open without the role switch: whatever the store or the driver, refused.
    it('refuses db.transaction(), startTransaction() and a transaction on a handle without plugins', async () => {
      let ran = false
      const body = async () => {
        ran = true
      }
      const refusal = /db\/tenant-transaction\.ts/
      await expect(app.current.db.transaction().execute(body)).rejects.toThrow(refusal)
      await expect(app.current.db.withoutPlugins().transaction().execute(body)).rejects.toThrow(refusal)
      await expect(app.current.db.startTransaction().execute()).rejects.toThrow(refusal)
      expect(ran).toBe(false)
      // The refused attempts gave their connection back.
      expect((await sql<{ n: number }>`select ${1}::int as n`.execute(app.current.db)).rows).toEqual([{ n: 1 }])
    })
  })

  // Each driver, whatever SVC_DB_DRIVER says for the run: both must open every transaction the same way.
  for (const driver of DRIVER_MODES) {
    describePostgres(`on the ${driver} driver`, () => {
      let database: Database
      beforeAll(() => {
        // The run's owner URL names a superuser: the strongest login a careless operator could configure.
        database = openPostgres(inject('databaseUrl'), 1, { driver })
      })
      afterAll(() => database.close())

      itPostgres('sends exactly its opening statements, then the tenant binding, for withTenant', async () => {
        const tenant = await createTenant()
        const { queries } = await recordQueries(() =>
          withTenant(database.db, tenant.id, (trx) => sql`select current_user as role`.execute(trx)),
        )
        expect(sent(queries)).toEqual([
          ...opening(false),
          { text: tenantBindingStatement(tenant.id).sql, values: [String(tenant.id)] },
          { text: 'select current_user as role', values: [] },
          { text: 'commit', values: [] },
        ])
      })

      itPostgres('sends exactly its read-only opening statements, then the request scope, for a GET', async () => {
        const tenant = await createTenant()
        const user = await insertUser(tenant)
        const scope = { tenantId: tenant.id, accessJti: randomUUID(), userId: user.id, readOnly: true }
        const { queries } = await recordQueries(async () => {
          const transaction = await openRequestTransaction(database.db, scope)
          await endsReadOnlyTransaction(sql`select ${1}::int as n`).execute(transaction.db)
          expect(await transaction.end('commit')).toEqual({ outcome: 'committed' })
        })
        expect(sent(queries)).toEqual([
          ...opening(true),
          { text: requestScopeStatement(scope).sql, values: [tenant.id, scope.accessJti, user.id] },
          { text: 'select $1::int as n', values: [1] },
          { text: 'commit', values: [] },
        ])
      })

      itPostgres('sends exactly its opening statements for a transaction that binds its tenant later, and for a lone statement', async () => {
        const { queries } = await recordQueries(async () => {
          await withServiceTransaction(database.db, (root) => sql`select 1 as one`.execute(root))
          await sql`select 2 as two`.execute(database.db)
        })
        expect(sent(queries)).toEqual([
          ...opening(false),
          { text: 'select 1 as one', values: [] },
          { text: 'commit', values: [] },
          ...opening(false),
          { text: 'select 2 as two', values: [] },
          { text: 'commit', values: [] },
        ])
      })

      itPostgres('runs a statement outside any transaction as the runtime role, also on a connection held by db.connection()', async () => {
        const roles = async () =>
          (await sql<{ role: string; login: string }>`select current_user as role, session_user as login`.execute(database.db)).rows
        expect(await roles()).toEqual([{ role: APP_ROLE, login: new URL(inject('databaseUrl')).username }])
        const held = await database.db.connection().execute(async (connection) => {
          // A begin sent as a statement runs in a transaction of its own too: it opens nothing the next ones join,
          // so a setting local to the transaction of one is gone for the next.
          await sql`begin`.execute(connection)
          await sql`select set_config('app.tenant_id', '7', true)`.execute(connection)
          return (await sql<{ role: string; tenant: string }>`
            select current_user as role, current_setting('app.tenant_id', true) as tenant`.execute(connection)).rows
        })
        expect(held).toEqual([{ role: APP_ROLE, tenant: '' }])
      })

      itPostgres('refuses what follows a commit sent as SQL, rather than run it outside the transaction as the login role', async () => {
        const tenant = await createTenant()
        let after: unknown
        const attempt = withTenant(database.db, tenant.id, async (trx) => {
          await sql`select 1`.execute(trx)
          await sql`commit`.execute(trx)
          after = (await sql<{ role: string }>`select current_user as role`.execute(trx)).rows
        })
        await expect(attempt).rejects.toThrow(/ended on the server/)
        expect(after).toBeUndefined()
        expect((await sql<{ role: string }>`select current_user as role`.execute(database.db)).rows).toEqual([{ role: APP_ROLE }])
      })
    })
  }

  describePostgres('on the plain driver', () => {
    let database: Database
    beforeAll(() => {
      database = openPostgres(inject('runtimeDatabaseUrl'), 1, { driver: 'plain' })
    })
    afterAll(() => database.close())

    itPostgres('sends one statement per round trip, none of them named, none held', async () => {
      const tenant = await createTenant()
      const exchanges = await recordExchanges(() =>
        withTenant(database.db, tenant.id, async (trx) => {
          await sql`select ${1}::int as n`.execute(trx)
          await sql`select ${2}::int as n`.execute(trx)
        }),
      )
      expect(exchanges).toEqual([
        ...opening(false).map((statement) => [statement.text]),
        [tenantBindingStatement(tenant.id).sql],
        ['select $1::int as n'],
        ['select $1::int as n'],
        ['commit'],
      ])
      const { queries } = await recordQueries(() => sql`select ${3}::int as n`.execute(database.db))
      expect(queries.filter((query) => query.name)).toEqual([])
    })
  })
})
