import pg from 'pg'

/** One statement of a batch: unnamed, or with the name it is prepared under on this connection. */
export interface BatchStatement {
  text: string
  values: unknown[]
  name?: string
}

/** What became of one statement of a batch. `skipped`: an earlier statement failed, so the server never ran it. */
export type BatchOutcome =
  | { status: 'answered'; result: pg.QueryResult }
  | { status: 'failed'; error: unknown }
  | { status: 'skipped' }

interface ServerMessage {
  fields: unknown[]
}

// pg's own value conversion (Dates, arrays, JSON, Buffers), the one Query#prepare applies while it writes.
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils

// The pg classes this one extends and fills in; @types/pg declares neither their handlers nor Result.
type ResultBuilder = pg.QueryResult & {
  _types: unknown
  addFields(fields: unknown[]): void
  parseRow(fields: unknown[]): unknown
  addRow(row: unknown): void
  addCommandComplete(message: unknown): void
}
type ResultConstructor = new (rowMode: undefined, types: unknown) => ResultBuilder
type Connection = {
  parse(message: { text: string; name: string }): void
  bind(message: { portal: string; statement: string; values: unknown[] }): void
  describe(message: { type: 'P'; name: string }): void
  execute(message: { portal: string; rows: number }): void
  sync(): void
  stream: { cork(): void; uncork(): void }
  parsedStatements: Record<string, string>
  submittedNamedStatements: Record<string, string>
}

/**
 * Several statements written as one extended-protocol exchange that ends with a single Sync, so the server runs
 * them in order and answers them all with one ReadyForQuery: one flush on the server, one packet back, and behind
 * a transaction pooler one forwarding instead of one per statement. pg-client.ts writes a transaction's held
 * opening statements (begin, role, time limit, tenant binding) with its next statement this way.
 *
 * When a statement fails, the server skips every later message up to the Sync: the statements after it never run
 * (`skipped`), a `commit` among them included, so a transaction begun in the batch is left aborted for its owner
 * to roll back. PostgreSQL starts `statement_timeout` at the first statement after it is set and stops it at the
 * Sync, so the batch's remaining statements share one time limit.
 *
 * A pg Query subclass, because pg's pipeline mode accepts no other submittable; the client routes every answer
 * message up to the batch's ReadyForQuery to it, as to any query.
 */
export class SyncedBatch extends (pg.Query as unknown as new (config: { text: string }) => object) {
  readonly #statements: BatchStatement[]
  readonly #results: ResultBuilder[] = []
  /**
   * The name of every Parse this batch sent ('' for unnamed ones, which are confirmed too), in order, until the
   * server confirms each (handleParseComplete).
   */
  readonly #parsing: string[] = []
  #connection: Connection | null = null
  /** Statements the server has answered in full (their CommandComplete arrived). */
  #completed = 0
  /** A row of the statement at `index` that pg's type parsers could not read. */
  #rowError: { index: number; error: unknown } | null = null
  #settled = false
  /** pg calls this with the batch's end (and its read timeout wraps it); set by the caller. */
  callback: (error: unknown, outcomes?: BatchOutcome[]) => void = () => undefined
  declare _result: ResultBuilder

  constructor(statements: BatchStatement[]) {
    super({ text: '/* synced batch */' })
    this.#statements = statements
  }

  /** The statements, in the order they are written. */
  get statements(): readonly BatchStatement[] {
    return this.#statements
  }

  submit(connection: Connection): Error | null {
    // Convert every value before the first byte is written: a value pg cannot send fails the whole batch while
    // nothing of it has reached the server (Query#prepare would have written the statements before it).
    let values: unknown[][]
    try {
      values = this.#statements.map((statement) => statement.values.map((value) => prepareValue(value)))
    } catch (error) {
      return error as Error
    }
    this.#connection = connection
    const Result = this._result.constructor as ResultConstructor
    connection.stream.cork()
    try {
      this.#statements.forEach((statement, index) => {
        const name = statement.name ?? ''
        const known = name !== '' && (connection.parsedStatements[name] ?? connection.submittedNamedStatements[name])
        if (!known) {
          connection.parse({ text: statement.text, name })
          if (name !== '') connection.submittedNamedStatements[name] = statement.text
          this.#parsing.push(name)
        }
        connection.bind({ portal: '', statement: name, values: values[index]! })
        connection.describe({ type: 'P', name: '' })
        connection.execute({ portal: '', rows: 0 })
        this.#results.push(new Result(undefined, this._result._types))
      })
      connection.sync()
    } finally {
      connection.stream.uncork()
    }
    return null
  }

  /** A statement this batch parsed is now prepared on the connection (called by the client, in order). */
  handleParseComplete(): void {
    const name = this.#parsing.shift()
    if (!name || !this.#connection) return
    this.#connection.parsedStatements[name] = this.#connection.submittedNamedStatements[name]!
    delete this.#connection.submittedNamedStatements[name]
  }

  handleRowDescription(message: ServerMessage): void {
    this.#results[this.#completed]?.addFields(message.fields)
  }

  handleDataRow(message: ServerMessage): void {
    const result = this.#results[this.#completed]
    if (!result || this.#rowError) return
    try {
      result.addRow(result.parseRow(message.fields))
    } catch (error) {
      this.#rowError = { index: this.#completed, error }
    }
  }

  handleCommandComplete(message: unknown): void {
    this.#results[this.#completed]?.addCommandComplete(message)
    this.#completed++
  }

  handleEmptyQuery(): void {
    this.#completed++
  }

  handleError(error: unknown): void {
    this.#settle(this.#outcomes(error))
  }

  handleReadyForQuery(): void {
    this.#settle(this.#outcomes(null))
  }

  #outcomes(error: unknown): BatchOutcome[] {
    const rowError = this.#rowError
    return this.#statements.map((_, index): BatchOutcome => {
      if (rowError?.index === index) return { status: 'failed', error: rowError.error }
      if (index < this.#completed) return { status: 'answered', result: this.#results[index]! }
      if (index === this.#completed && error !== null) return { status: 'failed', error }
      return { status: 'skipped' }
    })
  }

  #settle(outcomes: BatchOutcome[]): void {
    if (this.#settled) return
    this.#settled = true
    // Names whose Parse the server skipped or refused are not prepared: the next use must parse them again.
    for (const name of this.#parsing.splice(0)) if (name) delete this.#connection?.submittedNamedStatements[name]
    this.callback(null, outcomes)
  }
}
