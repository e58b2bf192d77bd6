import net from 'node:net'
import type pg from 'pg'
import { afterAll, beforeAll, expect, inject, vi } from 'vitest'
import { createPool } from '../../db/database.js'
import type { ServiceClient } from '../../db/driver/pg-client.js'
import { describePipelined, itPipelined } from '../support/helper.js'
import { transactionStatus } from './pool-connection.js'

type Client = pg.PoolClient & Pick<ServiceClient, 'openTransaction' | 'run' | 'endTransaction'>

/**
 * db/driver/pg-client.ts: a read-only transaction's last read (flagged endsReadOnlyTransaction) carries the
 * transaction's commit in its own write, so GET /v1/me is one round trip. A driver test; the embedded store has none.
 */
describePipelined('a read-only transaction ended by its last read', () => {
  let pool: pg.Pool
  beforeAll(() => {
    pool = createPool(inject('databaseUrl'), 1)
  })
  afterAll(() => pool.end())

  const statement = (text: string, ...values: unknown[]) => ({ text, values })
  const beginReadOnly = (client: Client) => client.openTransaction([statement('begin read only')], true)
  const bindTenant = (client: Client) => client.run(statement(`select set_config('app.tenant_id', $1, true)`, '7'), { held: true })
  const last = (client: Client, text: string, ...values: unknown[]) => client.run(statement(text, ...values), { endsReadOnlyTransaction: true })
  const status = transactionStatus

  async function withClient(fn: (client: Client, writes: () => number) => Promise<void>) {
    const client = (await pool.connect()) as Client
    const writev = vi.spyOn(net.Socket.prototype, '_writev')
    const write = vi.spyOn(net.Socket.prototype, '_write')
    try {
      await fn(client, () => writev.mock.calls.length + write.mock.calls.length)
    } finally {
      vi.restoreAllMocks()
      client.release()
    }
  }

  itPipelined('sends begin, the held scope, the read and the commit in one write; the commit then sends nothing', async () => {
    await withClient(async (client, writes) => {
      beginReadOnly(client)
      await bindTenant(client)
      const { rows } = await last(client, "select current_setting('app.tenant_id') as tenant, $1::int as n", 1)
      expect(rows).toEqual([{ tenant: '7', n: 1 }])
      expect(writes()).toBe(1)
      expect(status(client)).toBe('I')
      expect((await client.endTransaction('commit')).command).toBe('COMMIT')
      expect(writes()).toBe(1)
      // The transaction really ended: a local setting of it is gone.
      expect((await client.query("select current_setting('app.tenant_id', true) as tenant", [])).rows).toEqual([{ tenant: '' }])
    })
  })

  itPipelined('leaves a read-write transaction open: there the flag changes nothing', async () => {
    await withClient(async (client) => {
      client.openTransaction([statement('begin')], false)
      await last(client, 'select $1::int as n', 1)
      expect(status(client)).toBe('T')
      await client.endTransaction('rollback')
      expect(status(client)).toBe('I')
    })
  })

  itPipelined('refuses a statement after the end instead of running it outside the transaction', async () => {
    await withClient(async (client) => {
      beginReadOnly(client)
      await bindTenant(client)
      await last(client, 'select $1::int as n', 1)
      await expect(client.query("select current_setting('app.tenant_id', true) as tenant", [])).rejects.toThrow(
        /after the end of its read-only transaction/,
      )
      // The callback form too: nothing slips past the end.
      const refused = await new Promise((resolve) => client.query('select $1::int as n', [1], (error: unknown) => resolve(error)))
      expect(String(refused)).toMatch(/after the end of its read-only transaction/)
      await client.endTransaction('rollback')
      expect((await client.query('select $1::int as n', [2])).rows).toEqual([{ n: 2 }])
    })
  })

  itPipelined('reports a held statement’s failure on the read, and never lets the commit look like success', async () => {
    await withClient(async (client) => {
      beginReadOnly(client)
      await client.run(statement('select 1 / $1::int', 0), { held: true })
      await expect(last(client, 'select $1::int as n', 1)).rejects.toThrow(/division by zero/)
      await expect(client.endTransaction('commit')).rejects.toThrow(/division by zero/)
      expect(status(client)).toBe('I')

      beginReadOnly(client)
      await expect(last(client, 'select 1 / $1::int as n', 0)).rejects.toThrow(/division by zero/)
      expect((await client.endTransaction('rollback')).command).toBe('ROLLBACK')
      expect((await client.query('select $1::int as n', [3])).rows).toEqual([{ n: 3 }])
    })
  })

  // Parsed once per connection, not on every request: the statements every transaction sends are prepared.
  itPipelined('prepares the statements every transaction sends, its opening and its commit or rollback, once per connection', async () => {
    await withClient(async (client) => {
      for (const end of ['commit', 'rollback'] as const) {
        client.openTransaction([statement('begin read only'), statement('set local statement_timeout = 4321')], true)
        await last(client, 'select $1::int as n', 1)
        await client.endTransaction(end)
        client.openTransaction([statement('begin'), statement('set local statement_timeout = 4321')], false)
        await client.run(statement('select $1::int as n', 2))
        await client.endTransaction(end)
      }
      const prepared = await client.query('select statement from pg_prepared_statements where statement not like $1', ['%$%'])
      expect(prepared.rows.map((row: { statement: string }) => row.statement).sort()).toEqual(
        ['begin', 'begin read only', 'commit', 'rollback', 'set local statement_timeout = 4321'].sort(),
      )
    })
  })

  itPipelined('is read only: PostgreSQL refuses a write in it', async () => {
    await withClient(async (client) => {
      beginReadOnly(client)
      // Refused when the statement starts, whether or not a row matches (temporary tables alone are exempt).
      await expect(client.run(statement('update tenants set name = name where id = $1', -1))).rejects.toThrow(/read-only transaction/)
      await client.endTransaction('rollback')
    })
  })
})
