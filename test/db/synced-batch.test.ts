import net from 'node:net'
import type pg from 'pg'
import { afterAll, afterEach, beforeAll, expect, inject, vi } from 'vitest'
import { APP_ROLE, createPool } from '../../db/database.js'
import { ENDS_READ_ONLY_TRANSACTION, SENT_WITH_NEXT } from '../../db/statement-cache.js'
import { describePostgres, itPostgres } from '../helper.js'
import { transactionStatus, withPoolConnection } from './pool-connection.js'

/**
 * db/synced-batch.ts as the service pg client uses it (db/pg-client.ts): what a transaction holds back leaves with
 * its next statement as one exchange with one Sync. The pg driver's own behaviour; the embedded store has none.
 */
describePostgres('statements written as one synced batch', () => {
  let pool: pg.Pool
  beforeAll(() => {
    // A runtime pool, as requests use it: every transaction switches role and sets its time limit.
    pool = createPool(inject('runtimeDatabaseUrl'), 1, { runtime: { role: APP_ROLE, statementTimeoutMs: 5_000 } })
  })
  afterAll(() => pool.end())
  afterEach(() => vi.restoreAllMocks())

  const withConnection = (use: (client: pg.PoolClient) => Promise<void>) => withPoolConnection(pool, use)
  const status = transactionStatus
  /** Counts the server's ReadyForQuery messages: one per Sync, each a flush on the server and a packet back. */
  function countReadyForQuery(client: pg.PoolClient): () => number {
    let count = 0
    ;(client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', () => count++)
    return () => count
  }

  itPostgres('answers a GET’s begin, role, time limit, scope, read and commit with one ReadyForQuery', async () => {
    await withConnection(async (client) => {
      const readies = countReadyForQuery(client)
      await client.query('start transaction read only', [])
      await client.query(`select set_config('app.tenant_id', $1, true) ${SENT_WITH_NEXT}`, ['7'])
      const { rows } = await client.query(
        `select current_setting('app.tenant_id') as tenant, current_user as role, current_setting('statement_timeout') as timeout ${ENDS_READ_ONLY_TRANSACTION}`,
        [],
      )
      expect(rows).toEqual([{ tenant: '7', role: APP_ROLE, timeout: '5s' }])
      await client.query('commit', [])
      // Before batches the server answered the begin, the scope, the read and the commit each with its own.
      expect(readies()).toBe(1)
      expect(status(client)).toBe('I')
    })
  })

  itPostgres('runs nothing after a failed statement, and leaves no transaction open on the connection', async () => {
    await withConnection(async (client) => {
      // A lone statement: begin, role, time limit, the statement and commit in one batch; the commit is skipped.
      await expect(client.query('select 1 / $1::int as n', [0])).rejects.toThrow(/division by zero/)
      expect(status(client)).toBe('I')
      // The same for a read-only transaction ended by its read, and for one ended by its owner.
      await client.query('start transaction read only', [])
      await client.query(`select 1 / $1::int ${SENT_WITH_NEXT}`, [0])
      await expect(client.query(`select $1::int as n ${ENDS_READ_ONLY_TRANSACTION}`, [1])).rejects.toThrow(/division by zero/)
      await client.query('commit', []).catch(() => undefined)
      expect(status(client)).toBe('I')
      await client.query('begin', [])
      await client.query(`select 1 / $1::int ${SENT_WITH_NEXT}`, [0])
      await expect(client.query('commit', [])).rejects.toThrow(/division by zero/)
      expect(status(client)).toBe('I')
      expect((await client.query('select $1::int as after', [3])).rows).toEqual([{ after: 3 }])
    })
  })

  itPostgres('keeps count of the statements a failed batch prepared: the next batch neither re-prepares nor misses one', async () => {
    await withConnection(async (client) => {
      const scope = `select set_config('app.tenant_id', $1, true) ${SENT_WITH_NEXT}`
      // The scope statement is prepared and succeeds, the statement after it fails, the commit is skipped.
      await client.query('begin', [])
      await client.query(scope, ['7'])
      await expect(client.query('select 1 / $1::int as failing_after_a_prepared_one', [0])).rejects.toThrow(/division by zero/)
      await client.query('rollback', [])
      // A failure before a statement's Parse: that statement was never prepared.
      await client.query('begin', [])
      await client.query(`select 1 / $1::int ${SENT_WITH_NEXT}`, [0])
      await expect(client.query('select $1::int as never_parsed', [1])).rejects.toThrow(/division by zero/)
      await client.query('rollback', [])
      // Both texts again, in one batch that succeeds: "already exists" or "does not exist" would fail it.
      await client.query('begin', [])
      await client.query(scope, ['8'])
      expect((await client.query('select $1::int as never_parsed', [2])).rows).toEqual([{ never_parsed: 2 }])
      await client.query('rollback', [])
    })
  })

  itPostgres('fails the statement whose row pg cannot read, and still ends the transaction it began', async () => {
    await withConnection(async (client) => {
      // A type parser that throws, as a broken custom parser would; only this connection, only the point type.
      const POINT = 600 as Parameters<pg.PoolClient['setTypeParser']>[0]
      client.setTypeParser(POINT, 'text', () => {
        throw new Error('unreadable point')
      })
      try {
        await client.query('start transaction read only', [])
        await client.query(`select set_config('app.tenant_id', $1, true) ${SENT_WITH_NEXT}`, ['7'])
        await expect(client.query(`select point($1, 2) as p ${ENDS_READ_ONLY_TRANSACTION}`, [1])).rejects.toThrow(/unreadable point/)
        await expect(client.query('commit', [])).rejects.toThrow(/unreadable point/)
        expect(status(client)).toBe('I')
      } finally {
        client.setTypeParser(POINT, 'text', (text: string) => text)
      }
      expect((await client.query('select $1::int as after', [4])).rows).toEqual([{ after: 4 }])
    })
  })

  itPostgres('writes nothing when a value of the batch cannot be sent: the held begin never reaches the server', async () => {
    await withConnection(async (client) => {
      const unsendable = {
        toPostgres() {
          throw new Error('no text form')
        },
      }
      await client.query('begin', [])
      const writes = [vi.spyOn(net.Socket.prototype, '_writev'), vi.spyOn(net.Socket.prototype, '_write')]
      await expect(client.query('select $1::text as v', [unsendable])).rejects.toThrow(/no text form/)
      expect(writes.reduce((sum, spy) => sum + spy.mock.calls.length, 0)).toBe(0)
      vi.restoreAllMocks()
      await client.query('rollback', [])
      expect(status(client)).toBe('I')
    })
  })
})
