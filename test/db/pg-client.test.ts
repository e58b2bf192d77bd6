import net from 'node:net'
import type pg from 'pg'
import { afterAll, afterEach, beforeAll, expect, inject, vi } from 'vitest'
import { createPool } from '../../db/database.js'
import { MAX_PREPARED_PER_CONNECTION, PLANNED_PER_EXECUTION, SENT_WITH_NEXT } from '../../db/statement-cache.js'
import { describePostgres, itPostgres } from '../helper.js'
import { transactionStatus, withPoolConnection } from './pool-connection.js'

// The pg driver's own behaviour; the embedded store has no pg driver.
describePostgres('the service pg client', () => {
  let pool: pg.Pool
  beforeAll(() => {
    pool = createPool(inject('databaseUrl'), 1)
  })
  afterAll(() => pool.end())
  // Socket spies count what a test writes; none may outlive it.
  afterEach(() => vi.restoreAllMocks())

  const withConnection = (use: (client: pg.PoolClient) => Promise<void>) => withPoolConnection(pool, use)
  const inTransaction = transactionStatus

  itPostgres('sends a transaction’s begin in one write with its first statement, and nothing before it', async () => {
    await withConnection(async (client) => {
      const writes = vi.spyOn(net.Socket.prototype, '_writev')
      const single = vi.spyOn(net.Socket.prototype, '_write')
      await client.query('begin', [])
      expect(writes.mock.calls.length + single.mock.calls.length).toBe(0)
      const { rows } = await client.query('select $1::int as answer', [42])
      expect(rows).toEqual([{ answer: 42 }])
      expect(writes.mock.calls.length + single.mock.calls.length).toBe(1)
      expect(inTransaction(client)).toBe('T')
      await client.query('rollback', [])
    })
  })

  itPostgres('keeps the transaction: a rollback undoes the first statement’s work', async () => {
    await withConnection(async (client) => {
      await client.query('create temporary table held_begin_probe (n int)', [])
      await client.query('begin', [])
      await client.query('insert into held_begin_probe values ($1)', [1])
      await client.query('rollback', [])
      expect((await client.query('select count(*)::int as n from held_begin_probe', [])).rows).toEqual([{ n: 0 }])
    })
  })

  itPostgres('fails the first statement’s promise when it fails, leaving a transaction to roll back', async () => {
    await withConnection(async (client) => {
      await client.query('begin', [])
      await expect(client.query('select 1 / $1::int', [0])).rejects.toThrow(/division by zero/)
      // pg rejects on the error message, before the server's ReadyForQuery updates the transaction status; the
      // next statement is queued behind it and meets the aborted transaction.
      await expect(client.query('select $1::int', [1])).rejects.toThrow(/current transaction is aborted/)
      await client.query('rollback', [])
      expect(inTransaction(client)).toBe('I')
    })
  })

  itPostgres('drops a begin that sent nothing when the connection goes back to the pool', async () => {
    const first = await pool.connect()
    await first.query('begin', [])
    first.release()
    await withConnection(async (second) => {
      expect(second).toBe(first) // a pool of one: the same connection
      await second.query('select $1::int', [1])
      expect(inTransaction(second)).toBe('I')
    })
  })

  const failingWithNext = `select 1 / $1::int as held ${SENT_WITH_NEXT}`
  /** Opens a transaction whose first statement fails on the server but is held, so nothing has reported it yet. */
  const beginWithHeldFailure = async (client: pg.PoolClient) => {
    await client.query('begin', [])
    await client.query(failingWithNext, [0])
  }
  const writesTo = () => [vi.spyOn(net.Socket.prototype, '_writev'), vi.spyOn(net.Socket.prototype, '_write')]
  const count = (spies: ReturnType<typeof writesTo>) => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0)

  itPostgres('holds a statement marked SENT_WITH_NEXT and writes it with begin and the next statement at once', async () => {
    await withConnection(async (client) => {
      await client.query('create temporary table held_scope_probe (n int)', [])
      const writes = writesTo()
      await client.query('begin', [])
      await client.query(`insert into held_scope_probe values ($1) ${SENT_WITH_NEXT}`, [7])
      expect(count(writes)).toBe(0)
      expect((await client.query('select n from held_scope_probe', [])).rows).toEqual([{ n: 7 }])
      expect(count(writes)).toBe(1)
      await client.query('commit', [])
      expect(inTransaction(client)).toBe('I')
    })
  })

  itPostgres('answers the next statement and the commit with a held statement’s error: never a silent rollback', async () => {
    await withConnection(async (client) => {
      await beginWithHeldFailure(client)
      // The server answers this one "current transaction is aborted"; the cause is the held statement.
      await expect(client.query('select $1::int as next', [1])).rejects.toThrow(/division by zero/)
      await expect(client.query('select $1::int as later', [2])).rejects.toThrow(/division by zero/)
      await expect(client.query('commit', [])).rejects.toThrow(/division by zero/)
      expect(inTransaction(client)).toBe('I')
      expect((await client.query('select $1::int as after', [3])).rows).toEqual([{ after: 3 }])
    })
  })

  itPostgres('reports a held statement’s error on the commit when the transaction sent nothing else', async () => {
    await withConnection(async (client) => {
      await beginWithHeldFailure(client)
      await expect(client.query('commit', [])).rejects.toThrow(/division by zero/)
      expect(inTransaction(client)).toBe('I')
    })
  })

  itPostgres('ends the transaction with a plain rollback once the held error was reported, and with it otherwise', async () => {
    await withConnection(async (client) => {
      await beginWithHeldFailure(client)
      await expect(client.query('select $1::int', [1])).rejects.toThrow(/division by zero/)
      await expect(client.query('rollback', [])).resolves.toMatchObject({ command: 'ROLLBACK' })
      expect(inTransaction(client)).toBe('I')
      // Nothing else was sent: the rollback itself carries the held statement and reports its error.
      await beginWithHeldFailure(client)
      await expect(client.query('rollback', [])).rejects.toThrow(/division by zero/)
      expect(inTransaction(client)).toBe('I')
    })
  })

  itPostgres('drops held statements when the connection goes back to the pool', async () => {
    const first = await pool.connect()
    await beginWithHeldFailure(first)
    first.release()
    await withConnection(async (second) => {
      expect(second).toBe(first)
      expect((await second.query('select $1::int as fresh', [1])).rows).toEqual([{ fresh: 1 }])
      expect(inTransaction(second)).toBe('I')
    })
  })

  itPostgres('prepares a statement once per connection, and stops naming new texts at its maximum', async () => {
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

  itPostgres('never prepares a statement that asks to be planned per execution', async () => {
    await withConnection(async (client) => {
      const text = `select $1::int as value ${PLANNED_PER_EXECUTION}`
      await client.query(text, [1])
      const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_prepared_statements where statement = $1', [text])
      expect(rows).toEqual([{ n: 0 }])
    })
  })
})
