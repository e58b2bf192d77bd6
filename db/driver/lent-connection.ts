import {
  SingleConnectionProvider,
  Transaction,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Kysely,
  type QueryResult,
} from 'kysely'
import type { DB } from '../schema.js'
import type { PooledConnection } from './pooled-connection.js'
import { flagsOf, ReadOnlyEndInWritingTransactionError, StatementAfterLastError } from './statement-flags.js'

/** A transaction on a connection lent by the pool: its handle, and the two ways it ends. */
export interface LentTransaction {
  readonly db: Transaction<DB>
  /** Commits and gives the connection back; throws when the commit failed (the connection is still lent then). */
  commit(): Promise<void>
  /** Rolls back and gives the connection back, whatever happens. */
  rollback(): Promise<void>
}

/**
 * One pooled connection lent to one transaction or one lone statement, as Kysely's DatabaseConnection. What
 * Kysely's PostgresConnection does for a query, without its per-query executor copies and transaction bookkeeping
 * (most of the request transaction's CPU in Node on GET /v1/me). Once given back it refuses every query, so a handle
 * kept past the end of its request can never reach the connection's next user.
 *
 * Every transaction's statements pass here, whatever the driver (pipelined, plain, the embedded store), so this is
 * where a statement's place in its transaction is enforced (statement-flags.ts): after a statement flagged `last`
 * every statement is refused, and a read that ends read-only transactions is refused in one that may write. The
 * latter is a check rather than a type: whether a request's transaction is read-only follows from its HTTP method
 * at run time, and the flag rides on a compiled statement (precompiled, raw `sql`) that no transaction type follows.
 */
export class LentConnection implements DatabaseConnection {
  #connection: PooledConnection | null
  readonly #release: () => void
  /** The statement last sent, until it is answered: the end waits for it (see `end`). */
  #inFlight: Promise<unknown> | null = null
  /** The open transaction may write; false for a read-only one and for a lone statement. */
  #writes = false
  /** In the open transaction, the statement flagged `last` once it was sent: nothing may follow it. */
  #last: CompiledQuery | null = null
  #inTransaction = false
  /** The last read committed the read-only transaction and the connection has gone back (#giveBackOnceCommitted). */
  #committedEarly = false

  constructor(connection: PooledConnection, release: () => void) {
    this.#connection = connection
    this.#release = release
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    // On the hot path one field and one flag more (the flags are read here once, for the driver too); the rest runs
    // only for a statement flagged `last`.
    if (this.#last !== null) throw new StatementAfterLastError(this.#last, compiled)
    const flags = flagsOf(compiled)
    if (flags.last && this.#inTransaction) {
      if (flags.endsReadOnlyTransaction && this.#writes) throw new ReadOnlyEndInWritingTransactionError(compiled)
      this.#last = compiled
    }
    const connection = this.#lent()
    const sent = connection.execute<R>(compiled, flags)
    const answered = this.#last === compiled && !this.#writes ? this.#giveBackOnceCommitted(connection, sent) : sent
    this.#inFlight = answered
    return answered
  }

  /**
   * A read-only transaction's last read may have carried its commit (the pipelined driver): the transaction is over
   * on the server when the answer arrives, so the connection goes back to the pool then, not once the request has
   * answered its client. Under load, when requests queue for connections, the rest of a request's work (its answer,
   * its hooks, and every other request's turn on the event loop meanwhile) no longer holds a connection the database
   * could be serving. The end that follows sends nothing (`end`); nothing can be sent after the last read.
   */
  async #giveBackOnceCommitted<R>(connection: PooledConnection, sent: Promise<QueryResult<R>>): Promise<QueryResult<R>> {
    const result = await sent
    if (this.#connection === connection && connection.committedByStatement?.()) {
      // Answered from the client's bookkeeping (the server has committed), which it clears for the next user.
      this.#committedEarly = true
      try {
        await connection.end('commit')
      } finally {
        // Whatever the bookkeeping says, the server has ended the transaction: the connection must not stay lent.
        this.giveBack()
      }
    }
    return result
  }

  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('streaming is not available on the runtime database')
  }

  async open(opening: readonly CompiledQuery[], readOnly: boolean): Promise<void> {
    this.#inTransaction = true
    this.#writes = !readOnly
    this.#last = null
    await this.#lent().open(opening, readOnly)
  }

  /**
   * A client that hangs up has its request's transaction ended by the request's safety net while the handler's
   * statement may still be on the wire. The end waits for that statement's answer first: the pg client updates the
   * connection's state when an answer arrives (a read that ended its read-only transaction marks it ended), and that
   * must happen while the connection is still lent, never after its next user has taken it.
   */
  async end(statement: 'commit' | 'rollback'): Promise<void> {
    await this.#inFlight?.catch(() => undefined)
    this.#inTransaction = false
    this.#last = null
    // A read-only transaction has nothing to undo: a rollback after its commit ends it as well as a commit.
    if (this.#committedEarly) return
    await this.#lent().end(statement)
  }

  giveBack(): void {
    if (!this.#connection) return
    this.#connection = null
    this.#release()
  }

  #lent(): PooledConnection {
    if (!this.#connection) throw new Error('this transaction has ended: its connection is back in the pool')
    return this.#connection
  }
}

/**
 * Opens transactions on connections lent by `lend`, with the handle Kysely's repositories use. The caller gives the
 * opening statements (db/tenant-transaction.ts); the pipelined driver holds them and writes them with the
 * transaction's first statement, the others send them now, one by one.
 */
export class ConnectionLender {
  readonly #lend: () => Promise<LentConnection>
  readonly #props: { config: { dialect: Dialect }; dialect: Dialect; driver: ReturnType<Dialect['createDriver']> }

  constructor(lend: () => Promise<LentConnection>, dialect: Dialect) {
    this.#lend = lend
    // A Transaction refuses `transaction()` and `connection()`, the only uses of its driver: this one is never started.
    this.#props = { config: { dialect }, dialect, driver: dialect.createDriver() }
  }

  /** A transaction whose handle runs `db`'s plugins (a handle of `withPlugin` keeps its own). */
  async begin(db: Kysely<DB>, opening: readonly CompiledQuery[], readOnly: boolean): Promise<LentTransaction> {
    const connection = await this.#lend()
    try {
      await connection.open(opening, readOnly)
    } catch (error) {
      // A statement sent one by one failed (a refused request scope): its transaction is aborted on the server.
      await connection.end('rollback').catch(() => undefined)
      connection.giveBack()
      throw error
    }
    const executor = db.getExecutor().withConnectionProvider(new SingleConnectionProvider(connection))
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
