import net from 'node:net'
import type pg from 'pg'
import { afterAll, beforeAll, expect, inject, vi } from 'vitest'
import { createPool } from '../../db/database.js'
import { ENDS_READ_ONLY_TRANSACTION, SENT_WITH_NEXT } from '../../db/statement-cache.js'
import { describePostgres, itPostgres } from '../helper.js'
import { transactionStatus } from './pool-connection.js'

/**
 * db/pg-client.ts: a read-only transaction's last read (ENDS_READ_ONLY_TRANSACTION) carries the transaction's commit
 * in its own write, so GET /v1/me is one round trip. The pg driver's own behaviour; the embedded store has none.
 */
describePostgres('a read-only transaction ended by its last read', () => {
  let pool: pg.Pool
  beforeAll(() => {
    pool = createPool(inject('databaseUrl'), 1)
  })
  afterAll(() => pool.end())

  const READ_ONLY = 'start transaction read only'
  const last = (text: string) => `${text} ${ENDS_READ_ONLY_TRANSACTION}`
  const status = transactionStatus

  async function withClient(fn: (client: pg.PoolClient, writes: () => number) => Promise<void>) {
    const client = await pool.connect()
    const writev = vi.spyOn(net.Socket.prototype, '_writev')
    const write = vi.spyOn(net.Socket.prototype, '_write')
    try {
      await fn(client, () => writev.mock.calls.length + write.mock.calls.length)
    } finally {
      vi.restoreAllMocks()
      client.release()
    }
  }

  itPostgres('sends begin, the held scope, the read and the commit in one write; the commit then sends nothing', async () => {
    await withClient(async (client, writes) => {
      await client.query(READ_ONLY, [])
      await client.query(`select set_config('app.tenant_id', $1, true) ${SENT_WITH_NEXT}`, ['7'])
      const { rows } = await client.query(last("select current_setting('app.tenant_id') as tenant, $1::int as n"), [1])
      expect(rows).toEqual([{ tenant: '7', n: 1 }])
      expect(writes()).toBe(1)
      expect(status(client)).toBe('I')
      expect((await client.query('commit', [])).command).toBe('COMMIT')
      expect(writes()).toBe(1)
      // The transaction really ended: a local setting of it is gone.
      expect((await client.query("select current_setting('app.tenant_id', true) as tenant", [])).rows).toEqual([{ tenant: '' }])
    })
  })

  itPostgres('leaves a read-write transaction open: there the mark changes nothing', async () => {
    await withClient(async (client) => {
      await client.query('begin', [])
      await client.query(last('select $1::int as n'), [1])
      expect(status(client)).toBe('T')
      await client.query('rollback', [])
      expect(status(client)).toBe('I')
    })
  })

  itPostgres('refuses a statement after the end instead of running it outside the transaction', async () => {
    await withClient(async (client) => {
      await client.query(READ_ONLY, [])
      await client.query(`select set_config('app.tenant_id', $1, true) ${SENT_WITH_NEXT}`, ['7'])
      await client.query(last('select $1::int as n'), [1])
      await expect(client.query("select current_setting('app.tenant_id', true) as tenant", [])).rejects.toThrow(
        /after the end of its read-only transaction/,
      )
      // The callback form too: nothing slips past the end.
      const refused = await new Promise((resolve) => client.query('select $1::int as n', [1], (error: unknown) => resolve(error)))
      expect(String(refused)).toMatch(/after the end of its read-only transaction/)
      await client.query('rollback', [])
      expect((await client.query('select $1::int as n', [2])).rows).toEqual([{ n: 2 }])
    })
  })

  itPostgres('reports a held statement’s failure on the read, and never lets the commit look like success', async () => {
    await withClient(async (client) => {
      await client.query(READ_ONLY, [])
      await client.query(`select 1 / $1::int ${SENT_WITH_NEXT}`, [0])
      await expect(client.query(last('select $1::int as n'), [1])).rejects.toThrow(/division by zero/)
      await expect(client.query('commit', [])).rejects.toThrow(/division by zero/)
      expect(status(client)).toBe('I')

      await client.query(READ_ONLY, [])
      await expect(client.query(last('select 1 / $1::int as n'), [0])).rejects.toThrow(/division by zero/)
      expect((await client.query('rollback', [])).command).toBe('ROLLBACK')
      expect((await client.query('select $1::int as n', [3])).rows).toEqual([{ n: 3 }])
    })
  })

  itPostgres('is read only: PostgreSQL refuses a write in it', async () => {
    await withClient(async (client) => {
      await client.query(READ_ONLY, [])
      // Refused when the statement starts, whether or not a row matches (temporary tables alone are exempt).
      await expect(client.query('update tenants set name = name where id = $1', [-1])).rejects.toThrow(/read-only transaction/)
      await client.query('rollback', [])
    })
  })
})
