import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely'
import { describe, expect, it } from 'vitest'
import { LentConnection } from '../../db/driver/lent-connection.js'
import type { PooledConnection } from '../../db/driver/pooled-connection.js'
import { endsReadOnlyTransaction } from '../../db/driver/statement-flags.js'
import type { DB } from '../../db/schema.js'

// Compiles only: the statement never reaches a server, the pooled connection below answers it.
const compiler = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
})
const lastRead = endsReadOnlyTransaction(compiler.selectFrom('users').select('id')).compile()

/**
 * A failing component, not a database: the pooled connection's own bookkeeping throws when the transaction that a
 * read has already committed on the server is ended. A connection lent past that point would never go back, and
 * one such request per busy moment empties the pool.
 */
describe('a connection given back once its last read committed', () => {
  it('goes back to the pool even when ending the committed transaction throws', async () => {
    let released = 0
    const pooled: PooledConnection = {
      open: async () => undefined,
      execute: async () => ({ rows: [] }),
      end: async () => {
        throw new Error('the end bookkeeping failed')
      },
      committedByStatement: () => true,
    }
    const lent = new LentConnection(pooled, () => (released += 1))
    await lent.open([], true)
    await expect(lent.executeQuery(lastRead)).rejects.toThrow('the end bookkeeping failed')
    expect(released).toBe(1)
    // Given back: the handle reaches the connection's next user never again, and the request's end sends nothing.
    await lent.end('commit')
    lent.giveBack()
    expect(released).toBe(1)
  })
})
