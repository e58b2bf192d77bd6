import pg from 'pg'
import { PLANNED_PER_EXECUTION, SENT_WITH_NEXT, StatementNames } from './statement-cache.js'

// What Kysely reads from the answer to `begin` (nothing but that it arrived).
const HELD_BEGIN: Partial<pg.QueryResult> = { command: 'BEGIN', rowCount: null, rows: [], fields: [] }
// The answer to a held statement: nobody reads it (SENT_WITH_NEXT), its failure surfaces with the next statement.
const HELD_STATEMENT: Partial<pg.QueryResult> = { command: 'SELECT', rowCount: null, rows: [], fields: [] }

type QueryArgs = unknown[]
type Callback = (error: unknown, result?: unknown) => void

const callbackOf = (args: QueryArgs): Callback | undefined => {
  const last = args[args.length - 1]
  return typeof last === 'function' ? (last as Callback) : undefined
}

/**
 * The pg client behind every pool (`pipeline: true`). Round trips are most of a request's cost here, so it saves
 * two kinds:
 *
 * - A parameterised statement is prepared once per connection and then only bound and executed (StatementNames),
 *   unless it ends with PLANNED_PER_EXECUTION.
 * - A transaction's `begin`, and a statement that ends with SENT_WITH_NEXT (the request scope), are not round trips
 *   of their own. The client answers them at once and holds them back, then writes them in one packet with the
 *   transaction's next statement (pipeline mode keeps the order and the answers come back together). Every
 *   tenant request starts with `begin` and the scope statement, so each saves two round trips. Nothing held
 *   reaches the server before that next statement, so held statements dropped on release (see `createPool`)
 *   leave no transaction behind.
 *
 * A held statement that fails has aborted its transaction on the server, so the next statement's own error is
 * only an echo of it: the client answers the next statement with the held statement's error, and every later
 * statement of the transaction too, `commit` included (the server turns that commit into a rollback, which must
 * never look like success). `rollback` ends it normally.
 */
export class ServiceClient extends pg.Client {
  readonly #statements = new StatementNames()
  #held: QueryArgs[] = []
  /** A held statement's failure already reported once, until its transaction ends. */
  #aborted: { error: unknown } | null = null

  // pg's query() has many overloads; only the (text, values[, callback]) form Kysely uses is intercepted.
  override query(...args: QueryArgs): never {
    const [text, values] = args
    if (typeof text === 'string' && Array.isArray(values) && args.length === 2) {
      if (text === 'begin' && values.length === 0) {
        this.#held.push(['begin', []])
        return Promise.resolve(HELD_BEGIN) as never
      }
      if (text.endsWith(SENT_WITH_NEXT)) {
        this.#held.push(this.#prepared(args))
        return Promise.resolve(HELD_STATEMENT) as never
      }
    }
    const forwarded = this.#prepared(args)
    if (this.#held.length === 0 && this.#aborted === null) return this.#send(forwarded) as never
    const callback = callbackOf(forwarded)
    const answer = this.#sendAfterHeld(callback ? forwarded.slice(0, -1) : forwarded, typeof text === 'string' ? text : '')
    if (!callback) return answer as never
    answer.then((result) => callback(null, result), callback)
    return undefined as never
  }

  /** Forgets statements that never reached the server (their transaction sent nothing else). */
  dropHeldStatements(): void {
    this.#held = []
    this.#aborted = null
  }

  async #sendAfterHeld(args: QueryArgs, text: string): Promise<unknown> {
    const held = this.#held
    this.#held = []
    const stream = this.connection.stream
    stream.cork()
    let heldAnswers: Promise<unknown>[]
    let answered: Promise<unknown>
    try {
      heldAnswers = held.map((statement) => this.#send(statement) as Promise<unknown>)
      answered = this.#send(args) as Promise<unknown>
    } finally {
      stream.uncork()
    }
    // Every answer is in before the caller hears of any (a commit must have ended the transaction when it fails).
    const [answer, ...heldOutcomes] = await Promise.allSettled([answered, ...heldAnswers])
    const failed = heldOutcomes.find((outcome) => outcome.status === 'rejected')
    if (failed) this.#aborted = { error: failed.reason }
    const aborted = this.#aborted
    if (text === 'commit' || text === 'rollback') this.#aborted = null
    // A rollback after the failure was reported is the caller cleaning up: it succeeds like any rollback.
    if (!aborted || (text === 'rollback' && !failed)) {
      if (answer!.status === 'rejected') throw answer!.reason
      return answer!.value
    }
    throw aborted.error
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
