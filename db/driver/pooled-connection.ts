import type { CompiledQuery, QueryResult } from 'kysely'
import type pg from 'pg'
import { ENDED_ON_SERVER, transactionEndedOnServer, type ServiceClient, type Statement } from './pg-client.js'
import type { StatementFlags } from './statement-flags.js'

/**
 * One connection of a runtime database as a transaction, or a lone statement, uses it. Each store has its own:
 * the pipelined and the plain pg driver below, and the embedded store (db/embedded.ts).
 */
export interface PooledConnection {
  /** Opens a transaction with `opening`: begin first, then what the transaction sets for itself. */
  open(opening: readonly CompiledQuery[], readOnly: boolean): Promise<void>
  /**
   * A statement of the open transaction; outside one, a statement in a transaction of its own. `flags` are the
   * statement's (flagsOf), read once by LentConnection.
   */
  execute<R>(query: CompiledQuery, flags: StatementFlags): Promise<QueryResult<R>>
  /** Ends the open transaction; a commit the server answered with a rollback throws. */
  end(statement: 'commit' | 'rollback'): Promise<void>
  /**
   * True when a statement just answered has committed the open transaction on the server (a read-only
   * transaction's last read carried the commit): its end then sends nothing. Absent where no statement can.
   */
  committedByStatement?(): boolean
}

const AFFECTING_ROWS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

/** What Kysely reads from a pg result (what its own PostgresConnection returns). */
function resultOf<R>({ command, rowCount, rows }: pg.QueryResult): QueryResult<R> {
  return { numAffectedRows: AFFECTING_ROWS.has(command) ? BigInt(rowCount ?? 0) : undefined, rows: (rows ?? []) as R[] }
}

const statementOf = (query: CompiledQuery): Statement => ({ text: query.sql, values: query.parameters })

// A failed statement the caller caught leaves its transaction aborted; PostgreSQL then answers a commit with ROLLBACK.
function committed(result: pg.QueryResult, statement: 'commit' | 'rollback'): void {
  if (statement === 'commit' && result.command === 'ROLLBACK') {
    throw new Error('the transaction was rolled back: one of its statements had failed')
  }
}

/** The default driver: the pipelined client, which alone reads the statements' flags. */
export class PipelinedConnection implements PooledConnection {
  readonly #client: ServiceClient

  constructor(client: ServiceClient) {
    this.#client = client
  }

  async open(opening: readonly CompiledQuery[], readOnly: boolean): Promise<void> {
    this.#client.openTransaction(opening.map(statementOf), readOnly)
  }

  async execute<R>(query: CompiledQuery, flags: StatementFlags): Promise<QueryResult<R>> {
    return resultOf(await this.#client.run(statementOf(query), flags))
  }

  async end(statement: 'commit' | 'rollback'): Promise<void> {
    committed(await this.#client.endTransaction(statement), statement)
  }

  committedByStatement(): boolean {
    return this.#client.committedByStatement
  }
}

/**
 * SVC_DB_DRIVER=plain: stock node-postgres, one statement per round trip, nothing named, nothing held, no flag
 * read. Outside a transaction a statement still runs in one opened with the runtime pool's opening statements.
 */
export class PlainConnection implements PooledConnection {
  readonly #client: pg.ClientBase
  readonly #opening: readonly CompiledQuery[]
  #inTransaction = false

  constructor(client: pg.ClientBase, opening: readonly CompiledQuery[]) {
    this.#client = client
    this.#opening = opening
  }

  async open(opening: readonly CompiledQuery[]): Promise<void> {
    this.#inTransaction = true
    for (const statement of opening) await this.#send(statement)
  }

  async execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#inTransaction) {
      if (transactionEndedOnServer(this.#client)) throw new Error(`${ENDED_ON_SERVER}: ${query.sql.slice(0, 60)}`)
      return resultOf(await this.#send(query))
    }
    try {
      await this.open(this.#opening)
      const result = await this.#send(query)
      await this.end('commit')
      return resultOf(result)
    } catch (error) {
      if (this.#inTransaction) await this.end('rollback').catch(() => undefined)
      throw error
    }
  }

  async end(statement: 'commit' | 'rollback'): Promise<void> {
    this.#inTransaction = false
    committed(await this.#client.query(statement), statement)
  }

  #send(query: CompiledQuery): Promise<pg.QueryResult> {
    return this.#client.query(query.sql, query.parameters as unknown[])
  }
}
