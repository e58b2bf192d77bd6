import pg from 'pg'
import { SyncedBatch, type BatchOutcome, type BatchStatement } from './synced-batch.js'
import { StatementNames } from './statement-cache.js'
import type { StatementFlags } from './statement-flags.js'

// The answer to a held statement: nobody reads it, its failure surfaces with the next statement.
const HELD_STATEMENT: Partial<pg.QueryResult> = { command: 'SELECT', rowCount: null, rows: [], fields: [] }
// The answers to the commit or rollback of a transaction that a statement already ended (endsReadOnlyTransaction).
const ENDED_ALREADY = {
  commit: { command: 'COMMIT', rowCount: null, rows: [], fields: [] } as Partial<pg.QueryResult>,
  rollback: { command: 'ROLLBACK', rowCount: null, rows: [], fields: [] } as Partial<pg.QueryResult>,
}
const NO_FLAGS: StatementFlags = {}

type QueryArgs = unknown[]
type Callback = (error: unknown, result?: unknown) => void

const callbackOf = (args: QueryArgs): Callback | undefined => {
  const last = args[args.length - 1]
  return typeof last === 'function' ? (last as Callback) : undefined
}

/** One SQL statement and its values. */
export interface Statement {
  text: string
  values: readonly unknown[]
}

/** The service's own pg settings, passed through `pg.Pool` to every client it creates. */
export interface ServiceClientConfig extends pg.ClientConfig {
  /**
   * Set on a runtime pool: the statements that open a transaction there (begin, the role, the time limit, from
   * db/tenant-transaction.ts). A statement sent outside a transaction this client opened runs in a transaction of its
   * own opened with them, so nothing ever runs with the login role's rights. Unset on owner pools.
   */
  opening?: readonly Statement[]
  /** False: no named statement is ever sent (a transaction pooler that does not track them). Default true. */
  preparedStatements?: boolean
  /** Told of errors that mean a pooler mixed server sessions under this client (see pool-health.ts). */
  onStatementError?: (error: unknown) => void
}

/**
 * The pipelined pg client behind every pool of the default driver (`pipeline: true`).
 *
 * It keeps no session state on a server connection, so a transaction pooler (PgBouncer `pool_mode=transaction`)
 * may give each transaction to any server connection: a transaction's opening statements set the role and the time
 * limit inside it, a statement outside a transaction runs in one of its own (`opening`), and named statements are
 * used only when `preparedStatements` allows it.
 *
 * Round trips are most of a request's cost here, so it saves them, on explicit request only (statement-flags.ts):
 * - A parameterised statement is prepared once per connection and then only bound and executed (StatementNames),
 *   unless it is planned per execution or prepared statements are off.
 * - A transaction's opening statements (`openTransaction`) and `held` statements are not round trips of their own.
 *   The client answers them at once and holds them back, then writes them with the transaction's next statement as
 *   one SyncedBatch: one write, one Sync, so the server answers them all with one flush and a pooler forwards one
 *   answer. Nothing held reaches the server before that next statement, so held statements dropped on release (see
 *   pools.ts) leave no transaction behind.
 * - A read-only transaction's last read (`endsReadOnlyTransaction`) carries the transaction's commit.
 *
 * A held statement that fails has aborted its transaction on the server, so the next statement's own error is only
 * an echo of it: the client answers the next statement with the held statement's error, and every later statement
 * of the transaction too, the commit included (the server turns that commit into a rollback, which must never look
 * like success). A rollback ends it normally.
 */
export class ServiceClient extends pg.Client {
  readonly #statements: StatementNames | null
  readonly #opening: QueryArgs[] | null
  readonly #onStatementError: ((error: unknown) => void) | undefined
  #held: QueryArgs[] = []
  #inTransaction = false
  #readOnly = false
  /** The open transaction runs prepared statements from their generic plans (fromGenericPlan). */
  #genericPlans = false
  /** A held statement's failure already reported once, until its transaction ends. */
  #aborted: { error: unknown } | null = null
  /** A statement ended the transaction (endsReadOnlyTransaction): how, until its owner commits or rolls back. */
  #ended: { error: unknown } | null = null

  constructor(config: ServiceClientConfig = {}) {
    super(config)
    this.#statements = config.preparedStatements === false ? null : new StatementNames()
    this.#opening = config.opening ? config.opening.map(({ text, values }) => [text, [...values]]) : null
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

  /**
   * pg's own entry point, for code that holds a pooled client directly; the service's connections use `run`. Only
   * the (text, values[, callback]) form is accepted on a runtime pool: fail closed, a statement this client cannot
   * place inside a role-setting transaction is refused rather than run with the login role's rights.
   */
  override query(...args: QueryArgs): never {
    const [text, values] = args
    const plain = typeof text === 'string' && Array.isArray(values)
    if (!plain && this.#opening) throw new TypeError('runtime connections accept only query(text, values)')
    const callback = callbackOf(args)
    let answer: Promise<unknown>
    if (plain) answer = this.run({ text, values })
    // Whatever form it takes, nothing may run in (or after) a transaction a statement has already ended.
    else if (this.#ended) answer = this.#refusedAfterEnd(typeof text === 'string' ? text : '')
    else return this.#send(args) as never
    if (!callback) return answer as never
    answer.then((result) => callback(null, result), callback)
    return undefined as never
  }

  /**
   * Opens a transaction: `opening` (begin first, and whatever the transaction sets for itself) is held and written
   * with the transaction's next statement. `readOnly` when `opening` begins a read-only transaction.
   */
  openTransaction(opening: readonly Statement[], readOnly: boolean): void {
    if (this.#inTransaction || this.#ended) throw new Error('a transaction is already open on this connection')
    this.#inTransaction = true
    this.#readOnly = readOnly
    this.#genericPlans = false
    for (const statement of opening) this.#held.push(this.#everyTransaction(statement))
  }

  /**
   * Sends one statement: in the open transaction as `flags` allow, else by itself (on a runtime pool, in a
   * transaction of its own).
   */
  run(statement: Statement, flags: StatementFlags = NO_FLAGS): Promise<pg.QueryResult> {
    if (this.#ended) return this.#refusedAfterEnd(statement.text)
    const args = this.#prepared(statement, flags)
    if (!this.#inTransaction) return this.#reported(this.#opening ? this.#sendInOwnTransaction(args) : this.#send(args))
    this.#choosePlans(flags.fromGenericPlan === true && typeof args[0] !== 'string')
    if (flags.held) {
      this.#held.push(args)
      return Promise.resolve(HELD_STATEMENT as pg.QueryResult)
    }
    if (flags.endsReadOnlyTransaction && this.#readOnly) return this.#reported(this.#sendWithCommit(args))
    if (this.#held.length > 0 || this.#aborted !== null) return this.#reported(this.#sendAfterHeld(args, null))
    if (transactionEndedOnServer(this)) return Promise.reject(new Error(`${ENDED_ON_SERVER}: ${statement.text.slice(0, 60)}`))
    return this.#reported(this.#send(args))
  }

  /** A statement has committed the open transaction (endsReadOnlyTransaction): its end sends nothing. */
  get committedByStatement(): boolean {
    return this.#ended !== null && this.#ended.error === null
  }

  /** Ends the transaction `openTransaction` opened. */
  endTransaction(end: 'commit' | 'rollback'): Promise<pg.QueryResult> {
    if (this.#ended) return this.#endAfterEnded(end)
    const args = this.#everyTransaction(end === 'commit' ? COMMIT : ROLLBACK)
    const pending = this.#held.length > 0 || this.#aborted !== null
    this.#inTransaction = false
    return this.#reported(pending ? this.#sendAfterHeld(args, end) : this.#send(args))
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
  async #sendWithCommit(args: QueryArgs): Promise<pg.QueryResult> {
    const held = this.#held
    this.#held = []
    this.#inTransaction = false
    const outcomes = await this.#sendBatch([...held, args, this.#everyTransaction(COMMIT)])
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

  /** The owner's commit or rollback of a transaction a statement already ended. */
  #endAfterEnded(end: 'commit' | 'rollback'): Promise<pg.QueryResult> {
    const { error } = this.#ended!
    this.#ended = null
    // A commit after a failure must never look like success: the server rolled that transaction back.
    if (end === 'commit' && error !== null) return Promise.reject(error)
    return Promise.resolve(ENDED_ALREADY[end] as pg.QueryResult)
  }

  /** Anything but the end, after a statement ended the transaction, is a bug. */
  #refusedAfterEnd(text: string): Promise<never> {
    return Promise.reject(new Error('statement after the end of its read-only transaction: ' + text.slice(0, 60)))
  }

  #reported<T>(answer: Promise<T>): Promise<T> {
    if (!this.#onStatementError) return answer
    return answer.catch((error: unknown) => {
      this.#onStatementError?.(error)
      throw error
    })
  }

  /** A lone statement on a runtime connection: the opening statements, the statement and commit in one batch. */
  async #sendInOwnTransaction(args: QueryArgs): Promise<pg.QueryResult> {
    const opening = this.#opening!
    const outcomes = await this.#sendBatch([...opening, args, ['commit', []]])
    const failure = firstFailure(outcomes)
    if (failure) {
      await this.#endSkippedTransaction(outcomes)
      throw failure.error
    }
    return (outcomes[opening.length] as Answered).result
  }

  /** A statement (or with `end`, the transaction's end) written after what is held or a failure already reported. */
  async #sendAfterHeld(args: QueryArgs, end: 'commit' | 'rollback' | null): Promise<pg.QueryResult> {
    const held = this.#held
    this.#held = []
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
      if (end) await this.#endSkippedTransaction(outcomes)
    }
    if (failed) this.#aborted = failed
    const aborted = this.#aborted
    if (end) this.#aborted = null
    // A rollback after the failure was reported is the caller cleaning up: it succeeds like any rollback.
    if (!aborted || (end === 'rollback' && !failed)) {
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

  /**
   * Switches the transaction's plan_cache_mode when the next statement needs the other one: held, so the switch
   * travels with that statement. Local to the transaction, so nothing outlives it on the server connection.
   */
  #choosePlans(generic: boolean): void {
    if (generic === this.#genericPlans) return
    this.#genericPlans = generic
    this.#held.push(generic ? [FROM_GENERIC_PLANS, []] : [PLANS_AS_CONFIGURED, []])
  }

  #prepared({ text, values }: Statement, flags: StatementFlags): QueryArgs {
    if (!this.#statements || values.length === 0 || flags.plannedPerExecution) return [text, values]
    const name = this.#statements.nameFor(text)
    return name ? [{ name, text, values }] : [text, values]
  }

  /**
   * A statement of every transaction (its opening statements, its commit or rollback): prepared even without values,
   * so the server parses each once per connection instead of on every request. They are a handful of fixed texts, so
   * they cannot crowd the parameterised statements out of StatementNames.
   */
  #everyTransaction({ text, values }: Statement): QueryArgs {
    const name = this.#statements?.nameFor(text)
    return name ? [{ name, text, values: [...values] }] : [text, [...values]]
  }

  #send(args: QueryArgs): Promise<pg.QueryResult> {
    return (super.query as (...forwarded: QueryArgs) => Promise<pg.QueryResult>)(...args)
  }
}

type Answered = Extract<BatchOutcome, { status: 'answered' }>

const COMMIT: Statement = { text: 'commit', values: [] }
const ROLLBACK: Statement = { text: 'rollback', values: [] }
const FROM_GENERIC_PLANS = 'set local plan_cache_mode = force_generic_plan'
const PLANS_AS_CONFIGURED = 'set local plan_cache_mode to default'

export const ENDED_ON_SERVER = 'statement after its transaction ended on the server'

/**
 * The server answered the last statement idle although the transaction it belongs to was not ended by its owner: a
 * statement ended it (a `commit` sent as SQL). What follows must not run outside it, without the role switch.
 */
export function transactionEndedOnServer(client: pg.ClientBase): boolean {
  return (client as unknown as { getTransactionStatus(): string | null }).getTransactionStatus() === 'I'
}

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
