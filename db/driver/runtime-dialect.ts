import {
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
} from 'kysely'
import type { LentConnection } from './lent-connection.js'

const NO_TRANSACTIONS = 'the runtime database opens its transactions in db/tenant-transaction.ts only'

/**
 * Kysely's dialect for the runtime database on PostgreSQL, over a pool of either driver (pools.ts). A statement
 * sent through it outside a transaction (rate windows, claims through SECURITY DEFINER functions, probes, purges)
 * runs by itself in a transaction opened with the pool's opening statements, so never as the login role. Kysely's
 * own transactions would open without them: refused.
 */
export class RuntimeDialect implements Dialect {
  readonly #lend: () => Promise<LentConnection>
  readonly #close: () => Promise<void>

  constructor(lend: () => Promise<LentConnection>, close: () => Promise<void>) {
    this.#lend = lend
    this.#close = close
  }

  createDriver(): Driver {
    const lend = this.#lend
    const close = this.#close
    const refuse = async () => {
      throw new Error(NO_TRANSACTIONS)
    }
    return {
      init: async () => undefined,
      acquireConnection: (): Promise<DatabaseConnection> => lend(),
      releaseConnection: async (connection) => (connection as LentConnection).giveBack(),
      beginTransaction: refuse,
      commitTransaction: refuse,
      rollbackTransaction: refuse,
      destroy: () => close(),
    }
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler()
  }

  createAdapter() {
    return new PostgresAdapter()
  }

  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db)
  }
}
