import net from 'node:net'
import type pg from 'pg'
import { afterAll, afterEach, beforeAll, expect, inject, vi } from 'vitest'
import { APP_ROLE, createPool } from '../../db/database.js'
import type { ServiceClient } from '../../db/driver/pg-client.js'
import { openingStatements } from '../../db/tenant-transaction.js'
import { describePipelined, itPipelined } from '../support/helper.js'
import { transactionStatus, withPoolConnection } from './pool-connection.js'

type Client = pg.PoolClient & Pick<ServiceClient, 'openTransaction' | 'run' | 'endTransaction'>
const SESSION = { role: APP_ROLE, statementTimeoutMs: 5_000 }

/**
 * db/driver/synced-batch.ts as the pipelined pg client uses it (db/driver/pg-client.ts): what a transaction holds
 * back leaves with its next statement as one exchange with one Sync. A driver test; the embedded store has no pg driver.
 */
describePipelined('statements written as one synced batch', () => {
  let pool: pg.Pool
  beforeAll(() => {
    // A runtime pool, as requests use it: every transaction switches role and sets its time limit.
    pool = createPool(inject('runtimeDatabaseUrl'), 1, { runtime: { opening: openingStatements(SESSION, false), statementTimeoutMs: 5_000 } })
  })
  afterAll(() => pool.end())
  afterEach(() => vi.restoreAllMocks())

  const withConnection = (use: (client: Client) => Promise<void>) => withPoolConnection(pool, (client) => use(client as Client))
  const status = transactionStatus
  const statement = (text: string, ...values: unknown[]) => ({ text, values })
  /** Opens a transaction as db/tenant-transaction.ts does: begin, role, time limit, all held. */
  const open = (client: Client, readOnly: boolean) =>
    client.openTransaction(openingStatements(SESSION, readOnly).map((query) => statement(query.sql)), readOnly)
  const held = { held: true }
  const last = { endsReadOnlyTransaction: true }
  /** Counts the server's ReadyForQuery messages: one per Sync, each a flush on the server and a packet back. */
  function countReadyForQuery(client: pg.PoolClient): () => number {
    let count = 0
    ;(client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', () => count++)
    return () => count
  }

  itPipelined('answers a GET’s begin, role, time limit, scope, read and commit with one ReadyForQuery', async () => {
    await withConnection(async (client) => {
      const readies = countReadyForQuery(client)
      open(client, true)
      await client.run(statement(`select set_config('app.tenant_id', $1, true)`, '7'), held)
      const { rows } = await client.run(
        statement(`select current_setting('app.tenant_id') as tenant, current_user as role, current_setting('statement_timeout') as timeout`),
        last,
      )
      expect(rows).toEqual([{ tenant: '7', role: APP_ROLE, timeout: '5s' }])
      await client.endTransaction('commit')
      // Before batches the server answered the begin, the scope, the read and the commit each with its own.
      expect(readies()).toBe(1)
      expect(status(client)).toBe('I')
    })
  })

  itPipelined('runs nothing after a failed statement, and leaves no transaction open on the connection', async () => {
    await withConnection(async (client) => {
      // A lone statement: begin, role, time limit, the statement and commit in one batch; the commit is skipped.
      await expect(client.query('select 1 / $1::int as n', [0])).rejects.toThrow(/division by zero/)
      expect(status(client)).toBe('I')
      // The same for a read-only transaction ended by its read, and for one ended by its owner.
      open(client, true)
      await client.run(statement('select 1 / $1::int', 0), held)
      await expect(client.run(statement('select $1::int as n', 1), last)).rejects.toThrow(/division by zero/)
      await client.endTransaction('commit').catch(() => undefined)
      expect(status(client)).toBe('I')
      open(client, false)
      await client.run(statement('select 1 / $1::int', 0), held)
      await expect(client.endTransaction('commit')).rejects.toThrow(/division by zero/)
      expect(status(client)).toBe('I')
      expect((await client.query('select $1::int as after', [3])).rows).toEqual([{ after: 3 }])
    })
  })

  itPipelined('keeps count of the statements a failed batch prepared: the next batch neither re-prepares nor misses one', async () => {
    await withConnection(async (client) => {
      const scope = statement(`select set_config('app.tenant_id', $1, true)`, '7')
      // The scope statement is prepared and succeeds, the statement after it fails, the commit is skipped.
      open(client, false)
      await client.run(scope, held)
      await expect(client.run(statement('select 1 / $1::int as failing_after_a_prepared_one', 0))).rejects.toThrow(/division by zero/)
      await client.endTransaction('rollback')
      // A failure before a statement's Parse: that statement was never prepared.
      open(client, false)
      await client.run(statement('select 1 / $1::int', 0), held)
      await expect(client.run(statement('select $1::int as never_parsed', 1))).rejects.toThrow(/division by zero/)
      await client.endTransaction('rollback')
      // Both texts again, in one batch that succeeds: "already exists" or "does not exist" would fail it.
      open(client, false)
      await client.run({ ...scope, values: ['8'] }, held)
      expect((await client.run(statement('select $1::int as never_parsed', 2))).rows).toEqual([{ never_parsed: 2 }])
      await client.endTransaction('rollback')
    })
  })

  itPipelined('fails the statement whose row pg cannot read, and still ends the transaction it began', async () => {
    await withConnection(async (client) => {
      // A type parser that throws, as a broken custom parser would; only this connection, only the point type.
      const POINT = 600 as Parameters<pg.PoolClient['setTypeParser']>[0]
      client.setTypeParser(POINT, 'text', () => {
        throw new Error('unreadable point')
      })
      try {
        open(client, true)
        await client.run(statement(`select set_config('app.tenant_id', $1, true)`, '7'), held)
        await expect(client.run(statement('select point($1, 2) as p', 1), last)).rejects.toThrow(/unreadable point/)
        await expect(client.endTransaction('commit')).rejects.toThrow(/unreadable point/)
        expect(status(client)).toBe('I')
      } finally {
        client.setTypeParser(POINT, 'text', (text: string) => text)
      }
      expect((await client.query('select $1::int as after', [4])).rows).toEqual([{ after: 4 }])
    })
  })

  itPipelined('writes nothing when a value of the batch cannot be sent: the held opening never reaches the server', async () => {
    await withConnection(async (client) => {
      const unsendable = {
        toPostgres() {
          throw new Error('no text form')
        },
      }
      open(client, false)
      const writes = [vi.spyOn(net.Socket.prototype, '_writev'), vi.spyOn(net.Socket.prototype, '_write')]
      await expect(client.run(statement('select $1::text as v', unsendable))).rejects.toThrow(/no text form/)
      expect(writes.reduce((sum, spy) => sum + spy.mock.calls.length, 0)).toBe(0)
      vi.restoreAllMocks()
      await client.endTransaction('rollback')
      expect(status(client)).toBe('I')
    })
  })
})
