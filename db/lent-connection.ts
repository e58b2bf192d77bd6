import {
  SingleConnectionProvider,
  Transaction,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Kysely,
  type QueryResult,
} from 'kysely'
import type pg from 'pg'
import type { DB } from './schema.js'

const AFFECTING_ROWS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

/** A transaction on a connection lent by the pool: its handle, and the two ways it ends. */
export interface LentTransaction {
  readonly db: Transaction<DB>
  /** Commits and gives the connection back; throws when the commit failed (the connection is still lent then). */
  commit(): Promise<void>
  /** Rolls back and gives the connection back, whatever happens. */
  rollback(): Promise<void>
}

/**
 * One pooled pg client lent to one transaction, as Kysely's DatabaseConnection. What Kysely's PostgresConnection
 * does for a query, without its per-query executor copies and transaction bookkeeping (most of the request
 * transaction's CPU in Node on GET /v1/me). Once given back it refuses every query, so a handle kept past the end
 * of its request can never reach the connection's next user.
 */
class LentConnection implements DatabaseConnection {
  #client: pg.PoolClient | null
  /** The statement last sent, until it is answered: the end waits for it (see `end`). */
  #inFlight: Promise<unknown> | null = null

  constructor(client: pg.PoolClient) {
    this.#client = client
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const sent: Promise<pg.QueryResult> = this.#lent().query(compiled.sql, compiled.parameters as unknown[])
    this.#inFlight = sent
    const result = await sent
    const { command, rowCount, rows } = result
    return {
      numAffectedRows: AFFECTING_ROWS.has(command) ? BigInt(rowCount ?? 0) : undefined,
      rows: (rows ?? []) as R[],
    }
  }

  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('streaming is not available in a request transaction')
  }

  /**
   * A client that hangs up has its request's transaction ended by the request's safety net while the handler's
   * statement may still be on the wire. The end waits for that statement's answer first: the pg client updates the
   * connection's state when an answer arrives (a read that ended its read-only transaction marks it ended), and that
   * must happen while the connection is still lent, never after its next user has taken it.
   */
  async end(statement: 'commit' | 'rollback'): Promise<void> {
    await this.#inFlight?.catch(() => undefined)
    await this.#lent().query(statement, [])
  }

  giveBack(): void {
    const client = this.#client
    this.#client = null
    client?.release()
  }

  #lent(): pg.PoolClient {
    if (!this.#client) throw new Error('this transaction has ended: its connection is back in the pool')
    return this.#client
  }
}

/**
 * Opens transactions on connections lent by `pool`, with the handle Kysely's repositories use (db/request-transaction.ts
 * uses it for every request on PostgreSQL). `begin` (or `start transaction read only`) is held by the service's pg
 * client and leaves with the first statement (db/pg-client.ts).
 */
export class ConnectionLender {
  readonly #pool: pg.Pool
  readonly #db: Kysely<DB>
  readonly #props: { config: { dialect: Dialect }; dialect: Dialect; driver: ReturnType<Dialect['createDriver']> }

  constructor(pool: pg.Pool, db: Kysely<DB>, dialect: Dialect) {
    this.#pool = pool
    this.#db = db
    // A Transaction refuses `transaction()` and `connection()`, the only uses of its driver: this one is never started.
    this.#props = { config: { dialect }, dialect, driver: dialect.createDriver() }
  }

  async begin(readOnly: boolean): Promise<LentTransaction> {
    const connection = new LentConnection(await this.#pool.connect())
    try {
      await connection.executeQuery({ sql: readOnly ? 'start transaction read only' : 'begin', parameters: [] } as unknown as CompiledQuery)
    } catch (error) {
      connection.giveBack()
      throw error
    }
    const executor = this.#db.getExecutor().withConnectionProvider(new SingleConnectionProvider(connection))
    return {
      db: new Transaction<DB>({ ...this.#props, executor }),
      commit: async () => {
        await connection.end('commit')
        connection.giveBack()
      },
      rollback: async () => {
        try {
          await connection.end('rollback')
        } finally {
          connection.giveBack()
        }
      },
    }
  }
}
