import pg from 'pg'
import { PLANNED_PER_EXECUTION, StatementNames } from './statement-cache.js'

// What Kysely reads from the answer to `begin` (nothing but that it arrived).
const HELD_BEGIN: Partial<pg.QueryResult> = { command: 'BEGIN', rowCount: null, rows: [], fields: [] }

type QueryArgs = unknown[]

const isPromiseStyle = (args: QueryArgs) => typeof args[args.length - 1] !== 'function'

/**
 * The pg client behind every pool (`pipeline: true`). Round trips are most of a request's cost here, so it saves
 * two kinds:
 *
 * - A parameterised statement is prepared once per connection and then only bound and executed (StatementNames),
 *   unless it ends with PLANNED_PER_EXECUTION.
 * - A transaction's `begin` is not a round trip of its own. Kysely sends it and waits; the client answers at once
 *   and holds it back, then writes it in one packet with the transaction's first statement (pipeline mode keeps
 *   the order and both answers come back together). Every tenant transaction starts with `begin` and the scope
 *   statement, so each request saves a round trip. Nothing reaches the server before that first statement, so a
 *   held `begin` dropped on release (see `createPool`) leaves no transaction behind. The first statement's
 *   answer is only passed on once `begin` succeeded too.
 */
export class ServiceClient extends pg.Client {
  readonly #statements = new StatementNames()
  #beginHeld = false

  // pg's query() has many overloads; only the (text, values[, callback]) form Kysely uses is intercepted.
  override query(...args: QueryArgs): never {
    const [text, values] = args
    if (text === 'begin' && Array.isArray(values) && values.length === 0 && args.length === 2) {
      this.#beginHeld = true
      return Promise.resolve(HELD_BEGIN) as never
    }
    const forwarded = this.#prepared(args)
    if (!this.#beginHeld) return this.#send(forwarded) as never
    this.#beginHeld = false
    const stream = this.connection.stream
    stream.cork()
    try {
      const began = this.#send(['begin']) as Promise<unknown>
      const answered = this.#send(forwarded)
      if (!isPromiseStyle(forwarded)) {
        // A failed begin also fails the statement behind it, which reports through its callback.
        began.catch(() => undefined)
        return answered as never
      }
      return Promise.all([began, answered]).then(([, result]) => result) as never
    } finally {
      stream.uncork()
    }
  }

  /** Forgets a `begin` that never reached the server (the transaction sent no statement). */
  dropHeldBegin(): void {
    this.#beginHeld = false
  }

  #prepared(args: QueryArgs): QueryArgs {
    const [text, values] = args
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0) return args
    if (text.endsWith(PLANNED_PER_EXECUTION)) return args
    const name = this.#statements.nameFor(text)
    return name ? [{ name, text, values }, ...args.slice(2)] : args
  }

  #send(args: QueryArgs): unknown {
    return (super.query as (...forwarded: QueryArgs) => unknown)(...args)
  }
}
