import type { CompiledQuery, KyselyPlugin, RawBuilder, RootOperationNode, Transaction } from 'kysely'
import type { DB } from '../schema.js'

/**
 * What the pipelined driver may do with one statement besides sending it (pg-client.ts), and where in its
 * transaction the statement may run. Repositories set them with the helpers below; the plain driver and the embedded
 * store run every statement by itself, but every driver's transactions pass LentConnection (lent-connection.ts),
 * which enforces `last` and `endsReadOnlyTransaction`'s place.
 */
export interface StatementFlags {
  /**
   * Held back and written with the transaction's next statement. Only for a statement whose answer nobody reads and
   * whose failure may surface on that next statement (it is then the answer of every later statement, commit included).
   */
  readonly held?: boolean
  /**
   * The last statement of a read-only transaction: the transaction's commit is written with it. Always set with
   * `last`; refused in a transaction that may write (ReadOnlyEndInWritingTransactionError).
   */
  readonly endsReadOnlyTransaction?: boolean
  /** Nothing may run in its transaction after it but the end: a later statement is refused (StatementAfterLastError). */
  readonly last?: boolean
  /** Never prepared: planned for its own values on every run. */
  readonly plannedPerExecution?: boolean
  /** Prepared, and run from its generic plan from the first run on (inside a transaction). */
  readonly fromGenericPlan?: boolean
}

const NO_FLAGS: StatementFlags = Object.freeze({})

// Keyed by the compiled statement's root node: Kysely hands its connection the CompiledQuery it compiled, and the
// copies precompiled.ts makes for each run keep that node.
const flagsByNode = new WeakMap<RootOperationNode, StatementFlags>()

/** `node` with `flags` added: a node of its own, so the same statement compiled without them stays unflagged. */
function flagged(node: RootOperationNode, flags: StatementFlags): RootOperationNode {
  const copy = Object.freeze({ ...node })
  flagsByNode.set(copy, { ...flagsByNode.get(node), ...flags })
  return copy
}

function flagging(flags: StatementFlags): KyselyPlugin {
  return {
    // Added last (withPlugin appends), so no later plugin replaces the node the compiler puts into the CompiledQuery.
    transformQuery: ({ node }) => flagged(node, flags),
    transformResult: async ({ result }) => result,
  }
}

const HELD = { flags: { held: true }, plugin: flagging({ held: true }) }
const HELD_LAST = { flags: { held: true, last: true }, plugin: flagging({ held: true, last: true }) }
const ENDS_READ_ONLY_TRANSACTION = flagging({ endsReadOnlyTransaction: true, last: true })
const PLANNED_PER_EXECUTION = flagging({ plannedPerExecution: true })
const FROM_GENERIC_PLAN = flagging({ fromGenericPlan: true })

type Pluggable<Q> = { withPlugin(plugin: KyselyPlugin): Q }

/** The flags of a statement as Kysely hands it to a connection. */
export function flagsOf(query: CompiledQuery): StatementFlags {
  return flagsByNode.get(query.query) ?? NO_FLAGS
}

const excerpt = (query: CompiledQuery) => JSON.stringify(query.sql.replace(/\s+/g, ' ').trim().slice(0, 80))

/**
 * A statement sent after the one its transaction ran last (flagged `last`: a read that carried a read-only
 * transaction's commit, the quota's reservation). A programming error: the statement is refused before it reaches
 * the server, and the transaction can only end.
 */
export class StatementAfterLastError extends Error {
  constructor(last: CompiledQuery, refused: CompiledQuery) {
    super(`statement after the last statement of its transaction: ${excerpt(refused)} refused after ${excerpt(last)}`)
    this.name = 'StatementAfterLastError'
  }
}

/**
 * A read flagged `endsReadOnlyTransaction` sent in a transaction that may write (not `begin read only`), where the
 * pipelined driver would ignore the flag and later statements would run: refused on every driver alike, so a repository
 * function that ends read-only transactions cannot creep into a writing one.
 */
export class ReadOnlyEndInWritingTransactionError extends Error {
  constructor(refused: CompiledQuery) {
    super(`a read that ends a read-only transaction, sent in a transaction that may write: ${excerpt(refused)}`)
    this.name = 'ReadOnlyEndInWritingTransactionError'
  }
}

/**
 * A statement planned for its own values on every run, never prepared: PostgreSQL moves a prepared statement to a
 * generic plan after five runs when that looks no dearer, and a generic plan cannot see which tenant (of any size)
 * or which filter it serves. Use with `.$call(planPerExecution)`.
 */
export function planPerExecution<Q extends Pluggable<Q>>(query: Q): Q {
  return query.withPlugin(PLANNED_PER_EXECUTION)
}

/**
 * A statement whose one sensible plan serves every value, run from its generic plan, never planned per run. Meant
 * for statements over the monthly partitions of sms_messages and sms_recipients: PostgreSQL keeps planning a
 * prepared statement per run while its generic plan looks dearer, which a LIMIT or OFFSET parameter always makes
 * it look (it assumes a tenth of the rows), and planning a statement over 17 partitions costs about 2 ms, five
 * times what running its generic plan does (docs/architecture.md, "Data lifecycle"). The pipelined driver sets
 * `plan_cache_mode` for the statement's transaction before it and back before the next unflagged statement; a
 * statement it does not prepare (prepared statements off, as behind a transaction pooler) is planned per run.
 */
export function planOnce<Q extends Pluggable<Q>>(query: Q): Q {
  return query.withPlugin(FROM_GENERIC_PLAN)
}

/**
 * A read that is the last statement of the read-only transaction it runs in: in a read-only transaction (every GET)
 * the pipelined driver writes the transaction's commit with it, so the request needs one round trip in all. On every
 * driver a later statement of the transaction is refused (StatementAfterLastError), and so is the read itself in a
 * transaction that may write (ReadOnlyEndInWritingTransactionError); a lone statement is its transaction's only one.
 */
export function endsReadOnlyTransaction<Q extends Pluggable<Q>>(query: Q): Q {
  return query.withPlugin(ENDS_READ_ONLY_TRANSACTION)
}

/**
 * Runs a statement that answers nothing and refuses by raising (a quota check, a tenant binding): the pipelined
 * driver holds it and writes it with the transaction's next statement, so it costs no round trip of its own, and its
 * failure is the answer of that next statement, or of the commit when none follows. With `last`, it is the
 * transaction's last statement and travels with the commit: a later statement is refused (StatementAfterLastError).
 */
export async function executeHeld(
  trx: Transaction<DB>,
  query: RawBuilder<unknown> | CompiledQuery,
  place?: { last: true },
): Promise<void> {
  const { flags, plugin } = place?.last ? HELD_LAST : HELD
  if ('isRawBuilder' in query) await query.withPlugin(plugin).execute(trx)
  else await trx.executeQuery({ ...query, query: flagged(query.query, flags) })
}
