import net from 'node:net'
import type pg from 'pg'
import { afterAll, afterEach, beforeAll, expect, inject, vi } from 'vitest'
import { createPool } from '../../db/database.js'
import type { ServiceClient } from '../../db/driver/pg-client.js'
import { MAX_PREPARED_PER_CONNECTION } from '../../db/driver/statement-cache.js'
import { describePipelined, itPipelined } from '../support/helper.js'
import { transactionStatus, withPoolConnection } from './pool-connection.js'

type Client = pg.PoolClient & Pick<ServiceClient, 'openTransaction' | 'run' | 'endTransaction'>
const BEGIN = [{ text: 'begin', values: [] }]

// The pipelined driver's own behaviour (db/driver/pg-client.ts), on a pool of its own whatever SVC_DB_DRIVER says.
describePipelined('the pipelined pg client', () => {
  let pool: pg.Pool
  beforeAll(() => {
    pool = createPool(inject('databaseUrl'), 1)
  })
  afterAll(() => pool.end())
  // Socket spies count what a test writes; none may outlive it.
  afterEach(() => vi.restoreAllMocks())

  const withConnection = (use: (client: Client) => Promise<void>) => withPoolConnection(pool, (client) => use(client as Client))
  const inTransaction = transactionStatus
  const statement = (text: string, ...values: unknown[]) => ({ text, values })

  itPipelined('sends a transaction’s opening in one write with its first statement, and nothing before it', async () => {
    await withConnection(async (client) => {
      const writes = vi.spyOn(net.Socket.prototype, '_writev')
      const single = vi.spyOn(net.Socket.prototype, '_write')
      client.openTransaction(BEGIN, false)
      expect(writes.mock.calls.length + single.mock.calls.length).toBe(0)
      const { rows } = await client.run(statement('select $1::int as answer', 42))
      expect(rows).toEqual([{ answer: 42 }])
      expect(writes.mock.calls.length + single.mock.calls.length).toBe(1)
      expect(inTransaction(client)).toBe('T')
      await client.endTransaction('rollback')
    })
  })

  itPipelined('keeps the transaction: a rollback undoes the first statement’s work', async () => {
    await withConnection(async (client) => {
      await client.run(statement('create temporary table held_begin_probe (n int)'))
      client.openTransaction(BEGIN, false)
      await client.run(statement('insert into held_begin_probe values ($1)', 1))
      await client.endTransaction('rollback')
      expect((await client.run(statement('select count(*)::int as n from held_begin_probe'))).rows).toEqual([{ n: 0 }])
    })
  })

  itPipelined('fails the first statement’s promise when it fails, leaving a transaction to roll back', async () => {
    await withConnection(async (client) => {
      client.openTransaction(BEGIN, false)
      await expect(client.run(statement('select 1 / $1::int', 0))).rejects.toThrow(/division by zero/)
      // pg rejects on the error message, before the server's ReadyForQuery updates the transaction status; the
      // next statement is queued behind it and meets the aborted transaction.
      await expect(client.run(statement('select $1::int', 1))).rejects.toThrow(/current transaction is aborted/)
      await client.endTransaction('rollback')
      expect(inTransaction(client)).toBe('I')
    })
  })

  itPipelined('takes `begin` sent as a statement for a statement: only openTransaction holds a transaction’s opening', async () => {
    await withConnection(async (client) => {
      const writes = vi.spyOn(net.Socket.prototype, '_writev')
      const single = vi.spyOn(net.Socket.prototype, '_write')
      await client.query('begin', [])
      expect(writes.mock.calls.length + single.mock.calls.length).toBe(1)
      expect(inTransaction(client)).toBe('T')
      await client.query('rollback', [])
    })
  })

  itPipelined('drops an opening that sent nothing when the connection goes back to the pool', async () => {
    const first = (await pool.connect()) as Client
    first.openTransaction(BEGIN, false)
    first.release()
    await withConnection(async (second) => {
      expect(second).toBe(first) // a pool of one: the same connection
      await second.query('select $1::int', [1])
      expect(inTransaction(second)).toBe('I')
    })
  })

  /** Opens a transaction whose first statement fails on the server but is held, so nothing has reported it yet. */
  const beginWithHeldFailure = async (client: Client) => {
    client.openTransaction(BEGIN, false)
    await client.run(statement('select 1 / $1::int as held', 0), { held: true })
  }
  const writesTo = () => [vi.spyOn(net.Socket.prototype, '_writev'), vi.spyOn(net.Socket.prototype, '_write')]
  const count = (spies: ReturnType<typeof writesTo>) => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0)

  itPipelined('holds a statement flagged held and writes it with the opening and the next statement at once', async () => {
    await withConnection(async (client) => {
      await client.run(statement('create temporary table held_scope_probe (n int)'))
      const writes = writesTo()
      client.openTransaction(BEGIN, false)
      await client.run(statement('insert into held_scope_probe values ($1)', 7), { held: true })
      expect(count(writes)).toBe(0)
      expect((await client.run(statement('select n from held_scope_probe'))).rows).toEqual([{ n: 7 }])
      expect(count(writes)).toBe(1)
      await client.endTransaction('commit')
      expect(inTransaction(client)).toBe('I')
    })
  })

  itPipelined('answers the next statement and the commit with a held statement’s error: never a silent rollback', async () => {
    await withConnection(async (client) => {
      await beginWithHeldFailure(client)
      // The server answers this one "current transaction is aborted"; the cause is the held statement.
      await expect(client.run(statement('select $1::int as next', 1))).rejects.toThrow(/division by zero/)
      await expect(client.run(statement('select $1::int as later', 2))).rejects.toThrow(/division by zero/)
      await expect(client.endTransaction('commit')).rejects.toThrow(/division by zero/)
      expect(inTransaction(client)).toBe('I')
      expect((await client.run(statement('select $1::int as after', 3))).rows).toEqual([{ after: 3 }])
    })
  })

  itPipelined('reports a held statement’s error on the commit when the transaction sent nothing else', async () => {
    await withConnection(async (client) => {
      await beginWithHeldFailure(client)
      await expect(client.endTransaction('commit')).rejects.toThrow(/division by zero/)
      expect(inTransaction(client)).toBe('I')
    })
  })

  itPipelined('ends the transaction with a plain rollback once the held error was reported, and with it otherwise', async () => {
    await withConnection(async (client) => {
      await beginWithHeldFailure(client)
      await expect(client.run(statement('select $1::int', 1))).rejects.toThrow(/division by zero/)
      await expect(client.endTransaction('rollback')).resolves.toMatchObject({ command: 'ROLLBACK' })
      expect(inTransaction(client)).toBe('I')
      // Nothing else was sent: the rollback itself carries the held statement and reports its error.
      await beginWithHeldFailure(client)
      await expect(client.endTransaction('rollback')).rejects.toThrow(/division by zero/)
      expect(inTransaction(client)).toBe('I')
    })
  })

  itPipelined('drops held statements when the connection goes back to the pool', async () => {
    const first = (await pool.connect()) as Client
    await beginWithHeldFailure(first)
    first.release()
    await withConnection(async (second) => {
      expect(second).toBe(first)
      expect((await second.query('select $1::int as fresh', [1])).rows).toEqual([{ fresh: 1 }])
      expect(inTransaction(second)).toBe('I')
    })
  })

  itPipelined('prepares a statement once per connection, and stops naming new texts at its maximum', async () => {
    // A connection of its own: statements the other tests named count towards the maximum too.
    const own = createPool(inject('databaseUrl'), 1)
    const client = await own.connect()
    try {
      const probe = (n: number) => client.query(`select $1::int + ${n} as value`, [1])
      for (let n = 0; n < MAX_PREPARED_PER_CONNECTION + 5; n++) await probe(n)
      await probe(0)
      const { rows } = await client.query<{ named: number }>("select count(*)::int as named from pg_prepared_statements where name like 'svc\\_%'", [])
      // The count query itself is one more text, past the maximum: not named either.
      expect(rows[0]!.named).toBe(MAX_PREPARED_PER_CONNECTION)
      expect((await probe(1)).rows).toEqual([{ value: 2 }])
    } finally {
      client.release()
      await own.end()
    }
  })

  itPipelined('never prepares a statement flagged planned per execution', async () => {
    await withConnection(async (client) => {
      const text = 'select $1::int as planned_per_execution'
      await client.run(statement(text, 1), { plannedPerExecution: true })
      const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_prepared_statements where statement = $1', [text])
      expect(rows).toEqual([{ n: 0 }])
    })
  })
})
