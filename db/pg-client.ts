import pg from 'pg'
import { SyncedBatch, type BatchOutcome, type BatchStatement } from './synced-batch.js'
import { ENDS_READ_ONLY_TRANSACTION, PLANNED_PER_EXECUTION, SENT_WITH_NEXT, StatementNames } from './statement-cache.js'

// What Kysely reads from the answer to `begin` (nothing but that it arrived).
const HELD_BEGIN: Partial<pg.QueryResult> = { command: 'BEGIN', rowCount: null, rows: [], fields: [] }
// The answer to a held statement: nobody reads it (SENT_WITH_NEXT), its failure surfaces with the next statement.
const HELD_STATEMENT: Partial<pg.QueryResult> = { command: 'SELECT', rowCount: null, rows: [], fields: [] }
// The answers to the commit or rollback of a transaction that a statement already ended (ENDS_READ_ONLY_TRANSACTION).
const ENDED_ALREADY = {
  commit: { command: 'COMMIT', rowCount: null, rows: [], fields: [] } as Partial<pg.QueryResult>,
  rollback: { command: 'ROLLBACK', rowCount: null, rows: [], fields: [] } as Partial<pg.QueryResult>,
}

type QueryArgs = unknown[]
type Callback = (error: unknown, result?: unknown) => void

const callbackOf = (args: QueryArgs): Callback | undefined => {
  const last = args[args.length - 1]
  return typeof last === 'function' ? (last as Callback) : undefined
}

/** What every transaction of a runtime connection sets for itself (never the connection: see ServiceClient). */
export interface RuntimeSession {
  /** The role RLS applies to; the login role must be a member of it. */
  role: string
  /** `statement_timeout` of each transaction, in milliseconds. */
  statementTimeoutMs: number
}

/** The service's own pg settings, passed through `pg.Pool` to every client it creates. */
export interface ServiceClientConfig extends pg.ClientConfig {
  /** Set on the runtime pool; unset on owner pools (migrations, fixtures). */
  runtime?: RuntimeSession
  /** False: no named statement is ever sent (a transaction pooler that does not track them). Default true. */
  preparedStatements?: boolean
  /** Told of errors that mean a pooler mixed server sessions under this client (see db/pool-health.ts). */
  onStatementError?: (error: unknown) => void
}

// The role name comes from code (APP_ROLE), never from input; quoting keeps it an identifier all the same.
const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * The statements that open every transaction: `begin` and, on a runtime pool, the role and the time limit, both
 * `local`: they end with the transaction, so a transaction pooler may hand the server connection to anyone
 * afterwards. They are held and written with the transaction's first statement in one SyncedBatch, so they cost no
 * round trip. They take no parameters, so they are never prepared. Plain SET statements rather than one
 * `select set_config(...)`: a utility statement is parsed and run
 * without planning, which is what it costs on every transaction where nothing is prepared (behind a pooler).
 */
function beginStatements(runtime: RuntimeSession | undefined, begin: string): QueryArgs[] {
  if (!runtime) return [[begin, []]]
  return [
    [begin, []],
    [`set local role ${quoteIdentifier(runtime.role)}`, []],
    [`set local statement_timeout = ${Math.trunc(runtime.statementTimeoutMs)}`, []],
  ]
}

// What Kysely sends to open a transaction: `begin`, or with an access mode `start transaction read only`.
const READ_ONLY_BEGIN = 'start transaction read only'
const isBegin = (text: string) => text === 'begin' || text === READ_ONLY_BEGIN
const endsTransaction = (text: string) => text === 'commit' || text === 'rollback'

/**
 * The pg client behind every pool (`pipeline: true`).
 *
 * It keeps no session state on a server connection, so a transaction pooler (PgBouncer `pool_mode=transaction`)
 * may give each transaction to any server connection:
 * - On a runtime pool, every transaction switches to the runtime role and sets its statement timeout inside itself
 *   (`beginStatements`), and a statement sent outside a transaction is wrapped in one (begin, role, statement,
 *   commit, in one batch). So even a login role that is the owner or a superuser never runs a query outside RLS.
 * - Named statements are used only when `preparedStatements` allows it.
 *
 * Round trips are most of a request's cost here, so it saves two kinds:
 * - A parameterised statement is prepared once per connection and then only bound and executed (StatementNames),
 *   unless it ends with PLANNED_PER_EXECUTION or prepared statements are off.
 * - A transaction's `begin`, and a statement that ends with SENT_WITH_NEXT (the request scope, a tenant binding),
 *   are not round trips of their own. The client answers them at once and holds them back, then writes them with
 *   the transaction's next statement as one SyncedBatch (db/synced-batch.ts): one write, one Sync, so the server
 *   answers them all with one flush and a pooler forwards one answer. Every tenant transaction starts with `begin`
 *   and the scope or the tenant binding, so each saves two round trips. Nothing held
 *   reaches the server before that next statement, so held statements dropped on release (see `createPool`)
 *   leave no transaction behind.
 *
 * A held statement that fails has aborted its transaction on the server, so the next statement's own error is
 * only an echo of it: the client answers the next statement with the held statement's error, and every later
 * statement of the transaction too, `commit` included (the server turns that commit into a rollback, which must
 * never look like success). `rollback` ends it normally.
 */
export class ServiceClient extends pg.Client {
  readonly #statements: StatementNames | null
  readonly #runtime: RuntimeSession | undefined
  readonly #begin: QueryArgs[]
  readonly #beginReadOnly: QueryArgs[]
  readonly #onStatementError: ((error: unknown) => void) | undefined
  #held: QueryArgs[] = []
  #inTransaction = false
  #readOnly = false
  /** A held statement's failure already reported once, until its transaction ends. */
  #aborted: { error: unknown } | null = null
  /** A statement ended the transaction (ENDS_READ_ONLY_TRANSACTION): how, until its owner commits or rolls back. */
  #ended: { error: unknown } | null = null

  constructor(config: ServiceClientConfig = {}) {
    super(config)
    this.#statements = config.preparedStatements === false ? null : new StatementNames()
    this.#runtime = config.runtime
    this.#begin = beginStatements(config.runtime, 'begin')
    this.#beginReadOnly = beginStatements(config.runtime, 'begin read only')
    this.#onStatementError = config.onStatementError
    // A connection that breaks while checked out (the server went away, or a read timeout destroyed it) reports
    // the failure on its queries; the pool drops it on release because it is no longer queryable. Without this
    // listener pg re-emits the break as an 'error' nobody handles, which would end the process.
    this.on('error', () => undefined)
    // pg records a named statement as prepared when its own query's Parse is confirmed; a batch parses several,
    // so the confirmations of a batch's Parses go to the batch (pg's private active-query accessor, pinned pg).
    this.connection.on('parseComplete', () => {
      const active = (this as unknown as { _getActiveQuery(): unknown })._getActiveQuery()
      if (active instanceof SyncedBatch) active.handleParseComplete()
    })
  }

  // pg's query() has many overloads; only the (text, values[, callback]) form Kysely uses is intercepted.
  override query(...args: QueryArgs): never {
    const [text, values] = args
    const plain = typeof text === 'string' && Array.isArray(values)
    // Fail closed: on a runtime pool a statement this client cannot place inside a role-setting transaction
    // (another call form) is refused rather than run with the login role's rights.
    if (!plain && this.#runtime) throw new TypeError('runtime connections accept only query(text, values)')
    if (this.#ended) {
      // Whatever form it takes, nothing may run in (or after) a transaction a statement has already ended.
      const answer = this.#afterEnded(typeof text === 'string' ? text : '')
      const callback = callbackOf(args)
      if (!callback) return answer as never
      answer.then((result) => callback(null, result), callback)
      return undefined as never
    }
    if (plain && args.length === 2) {
      if (isBegin(text) && values.length === 0) {
        this.#inTransaction = true
        this.#readOnly = text === READ_ONLY_BEGIN
        this.#held.push(...(this.#readOnly ? this.#beginReadOnly : this.#begin))
        return Promise.resolve(HELD_BEGIN) as never
      }
      if (text.endsWith(SENT_WITH_NEXT) && this.#inTransaction) {
        this.#held.push(this.#prepared(args))
        return Promise.resolve(HELD_STATEMENT) as never
      }
      if (text.endsWith(ENDS_READ_ONLY_TRANSACTION) && this.#inTransaction && this.#readOnly) {
        const answer = this.#sendWithCommit(this.#prepared(args))
        return (this.#onStatementError ? answer.catch((error: unknown) => this.#reportAndThrow(error)) : answer) as never
      }
    }
    const forwarded = this.#prepared(args)
    const callback = callbackOf(forwarded)
    const bare = callback ? forwarded.slice(0, -1) : forwarded
    let answer: Promise<unknown>
    if (plain && this.#runtime && !this.#inTransaction && !endsTransaction(text)) {
      answer = this.#sendInOwnTransaction(bare)
    } else if (this.#held.length === 0 && this.#aborted === null) {
      if (plain && endsTransaction(text)) this.#inTransaction = false
      if (!this.#onStatementError) return this.#send(forwarded) as never
      answer = this.#send(bare) as Promise<unknown>
    } else {
      answer = this.#sendAfterHeld(bare, typeof text === 'string' ? text : '')
    }
    if (this.#onStatementError) answer = answer.catch((error: unknown) => this.#reportAndThrow(error))
    if (!callback) return answer as never
    answer.then((result) => callback(null, result), callback)
    return undefined as never
  }

  /** Forgets statements that never reached the server (their transaction sent nothing else). */
  dropHeldStatements(): void {
    this.#held = []
    this.#aborted = null
    this.#ended = null
    this.#inTransaction = false
  }

  /**
   * A read-only transaction's last statement: what is held, the statement and `commit` in one SyncedBatch, so the
   * transaction ends with the statement's answer. A read-only transaction changed nothing, so ending it early
   * cannot commit anything its owner might still want undone.
   */
  async #sendWithCommit(args: QueryArgs): Promise<unknown> {
    const held = this.#held
    this.#held = []
    this.#inTransaction = false
    const outcomes = await this.#sendBatch([...held, args, ['commit', []]])
    // The first failure is the cause (a refused scope aborts the transaction; the server skips what follows).
    const failure = this.#aborted ?? firstFailure(outcomes)
    this.#aborted = null
    this.#ended = { error: failure?.error ?? null }
    if (failure) {
      await this.#endSkippedTransaction(outcomes)
      throw failure.error
    }
    return (outcomes[held.length] as Answered).result
  }

  /** The owner's commit or rollback of a transaction a statement already ended; anything else is a bug. */
  #afterEnded(text: string): Promise<unknown> {
    const { error } = this.#ended!
    if (!endsTransaction(text)) {
      return Promise.reject(new Error('statement after the end of its read-only transaction: ' + text.slice(0, 60)))
    }
    this.#ended = null
    // A commit after a failure must never look like success: the server rolled that transaction back.
    if (text === 'commit' && error !== null) return Promise.reject(error)
    return Promise.resolve(ENDED_ALREADY[text as 'commit' | 'rollback'])
  }

  #reportAndThrow(error: unknown): never {
    this.#onStatementError?.(error)
    throw error
  }

  /** A lone statement on a runtime connection: begin (role, timeout), the statement and commit in one batch. */
  async #sendInOwnTransaction(args: QueryArgs): Promise<unknown> {
    const begin = this.#begin
    const outcomes = await this.#sendBatch([...begin, args, ['commit', []]])
    const failure = firstFailure(outcomes)
    if (failure) {
      await this.#endSkippedTransaction(outcomes)
      throw failure.error
    }
    return (outcomes[begin.length] as Answered).result
  }

  async #sendAfterHeld(args: QueryArgs, text: string): Promise<unknown> {
    const held = this.#held
    this.#held = []
    const ends = endsTransaction(text)
    if (ends) this.#inTransaction = false
    let answer: BatchOutcome
    let failed: { error: unknown } | null = null
    if (held.length === 0) {
      // Only a failure reported earlier is pending: the statement goes alone.
      answer = await (this.#send(args) as Promise<pg.QueryResult>).then(
        (result): BatchOutcome => ({ status: 'answered', result }),
        (error: unknown): BatchOutcome => ({ status: 'failed', error }),
      )
    } else {
      const outcomes = await this.#sendBatch([...held, args])
      answer = outcomes[held.length]!
      failed = firstFailure(outcomes.slice(0, held.length))
      if (ends) await this.#endSkippedTransaction(outcomes)
    }
    if (failed) this.#aborted = failed
    const aborted = this.#aborted
    if (ends) this.#aborted = null
    // A rollback after the failure was reported is the caller cleaning up: it succeeds like any rollback.
    if (!aborted || (text === 'rollback' && !failed)) {
      if (answer.status === 'answered') return answer.result
      throw answer.status === 'failed' ? answer.error : new Error('statement skipped after a failure')
    }
    throw aborted.error
  }

  /**
   * Writes `statements` as one SyncedBatch and waits for every answer. Never rejects: a connection that breaks
   * (or a read timeout) fails every statement with its error.
   */
  #sendBatch(statements: QueryArgs[]): Promise<BatchOutcome[]> {
    const batch = new SyncedBatch(statements.map(batchStatement))
    return new Promise((resolve) => {
      batch.callback = (error, outcomes) => {
        resolve(error || !outcomes ? statements.map((): BatchOutcome => ({ status: 'failed', error })) : outcomes)
      }
      this.#send([batch])
    })
  }

  /**
   * A batch whose `commit` or `rollback` the server skipped (an earlier statement failed) has left its transaction
   * open and aborted on the connection: roll it back now, so the connection (and behind a transaction pooler, the
   * server connection) is free again. A rollback with no transaction open only draws a warning.
   */
  async #endSkippedTransaction(outcomes: BatchOutcome[]): Promise<void> {
    if (outcomes[outcomes.length - 1]?.status !== 'skipped') return
    await (this.#send(['rollback', []]) as Promise<unknown>).catch(() => undefined)
  }

  #prepared(args: QueryArgs): QueryArgs {
    const [text, values] = args
    if (!this.#statements || typeof text !== 'string' || !Array.isArray(values) || values.length === 0) return args
    if (text.endsWith(PLANNED_PER_EXECUTION)) return args
    const name = this.#statements.nameFor(text)
    return name ? [{ name, text, values }, ...args.slice(2)] : args
  }

  #send(args: QueryArgs): unknown {
    return (super.query as (...forwarded: QueryArgs) => unknown)(...args)
  }
}

type Answered = Extract<BatchOutcome, { status: 'answered' }>

function firstFailure(outcomes: BatchOutcome[]): { error: unknown } | null {
  const failed = outcomes.find((outcome) => outcome.status === 'failed')
  return failed?.status === 'failed' ? { error: failed.error } : null
}

/** A statement as the client holds it ([text, values] or, prepared, [{ name, text, values }]) for a batch. */
function batchStatement(args: QueryArgs): BatchStatement {
  const [first, values] = args
  if (typeof first === 'string') return { text: first, values: (values as unknown[] | undefined) ?? [] }
  const { name, text, values: bound } = first as { name: string; text: string; values: unknown[] }
  return { name, text, values: bound }
}
