import net from 'node:net'
import type pg from 'pg'
import { afterAll, afterEach, beforeAll, expect, inject, vi } from 'vitest'
import { APP_ROLE, createPool } from '../../db/database.js'
import { ENDS_READ_ONLY_TRANSACTION, SENT_WITH_NEXT } from '../../db/statement-cache.js'
import { describePostgres, itPostgres } from '../helper.js'
import { transactionStatus, withPoolConnection } from './pool-connection.js'

/**
 * db/pg-client.ts behind a transaction pooler (prepared statements off): a transaction's opening (begin, role, time
 * limit) travels as one simple-protocol Query ahead of the transaction's first statement, in the same write. The
 * pg driver's own behaviour; the embedded store has none.
 */
describePostgres('a runtime transaction’s opening where nothing is prepared', () => {
  const runtime = { role: APP_ROLE, statementTimeoutMs: 5_000 }
  let pool: pg.Pool
  beforeAll(() => {
    pool = createPool(inject('runtimeDatabaseUrl'), 1, { runtime, preparedStatements: false })
  })
  afterAll(() => pool.end())
  afterEach(() => vi.restoreAllMocks())

  /** What `client` writes while `work` runs: simple Queries, Parses and socket writes. */
  async function written(client: pg.PoolClient, work: () => Promise<void>) {
    const connection = (client as unknown as { connection: { query(text: string): void; parse(message: { text: string }): void } }).connection
    const queries = vi.spyOn(connection, 'query')
    const parses = vi.spyOn(connection, 'parse')
    const writev = vi.spyOn(net.Socket.prototype, '_writev')
    const write = vi.spyOn(net.Socket.prototype, '_write')
    await work()
    return {
      queries: queries.mock.calls.map(([text]) => text),
      parses: parses.mock.calls.map(([message]) => message.text),
      writes: writev.mock.calls.length + write.mock.calls.length,
    }
  }

  itPostgres('sends begin, role and time limit as one Query in the same write as the first statement, and runs it inside', async () => {
    await withPoolConnection(pool, async (client) => {
      let rows: unknown[] = []
      const sent = await written(client, async () => {
        await client.query('start transaction read only', [])
        await client.query(`select set_config('app.tenant_id', $1, true) ${SENT_WITH_NEXT}`, ['7'])
        ;({ rows } = await client.query(
          `select current_setting('app.tenant_id') as tenant, current_user as role, current_setting('statement_timeout') as timeout,
                  current_setting('transaction_read_only') as read_only ${ENDS_READ_ONLY_TRANSACTION}`,
          [],
        ))
      })
      expect(rows).toEqual([{ tenant: '7', role: APP_ROLE, timeout: '5s', read_only: 'on' }])
      expect(sent.queries).toEqual([`begin read only; set local role "${APP_ROLE}"; set local statement_timeout = 5000`])
      expect(sent.parses).toEqual([expect.stringContaining('set_config'), expect.stringContaining('current_setting'), 'commit'])
      expect(sent.writes).toBe(1)
      expect(transactionStatus(client)).toBe('I')
      await client.query('commit', [])
    })
  })

  itPostgres('wraps a lone statement the same way: it runs as the runtime role, and commits', async () => {
    await withPoolConnection(pool, async (client) => {
      let rows: unknown[] = []
      const sent = await written(client, async () => {
        ;({ rows } = await client.query('select current_user as role, $1::int as n', [1]))
      })
      expect(rows).toEqual([{ role: APP_ROLE, n: 1 }])
      expect(sent.queries).toEqual([`begin; set local role "${APP_ROLE}"; set local statement_timeout = 5000`])
      expect(sent.writes).toBe(1)
      expect(transactionStatus(client)).toBe('I')
    })
  })

  itPostgres('rolls back what follows a failed statement and leaves the connection idle', async () => {
    await withPoolConnection(pool, async (client) => {
      await client.query('begin', [])
      await expect(client.query('select 1 / $1::int', [0])).rejects.toThrow(/division by zero/)
      await client.query('rollback', [])
      expect(transactionStatus(client)).toBe('I')
      expect((await client.query('select $1::int as after', [2])).rows).toEqual([{ after: 2 }])
    })
  })

  itPostgres('runs nothing after an opening that fails, never as the login role, and leaves the connection idle', async () => {
    const broken = createPool(inject('runtimeDatabaseUrl'), 1, { runtime: { ...runtime, role: 'svc_no_such_role' }, preparedStatements: false })
    try {
      await withPoolConnection(broken, async (client) => {
        await expect(client.query('select current_user as role, $1::int as n', [1])).rejects.toThrow(/svc_no_such_role/)
        expect(transactionStatus(client)).toBe('I')
        await client.query('begin', [])
        await client.query(`select set_config('app.tenant_id', $1, true) ${SENT_WITH_NEXT}`, ['7'])
        await expect(client.query('select current_user as role', [])).rejects.toThrow(/svc_no_such_role/)
        await expect(client.query('commit', [])).rejects.toThrow(/svc_no_such_role/)
        expect(transactionStatus(client)).toBe('I')
      })
    } finally {
      await broken.end()
    }
  })
})
