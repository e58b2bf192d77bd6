import type { CompiledQuery, KyselyPlugin, RawBuilder, RootOperationNode, Transaction } from 'kysely'
import type { DB } from '../schema.js'

/**
 * What the pipelined driver may do with one statement besides sending it (pg-client.ts). Repositories set them
 * with the helpers below; the plain driver and the embedded store ignore them and run every statement by itself.
 */
export interface StatementFlags {
  /**
   * Held back and written with the transaction's next statement. Only for a statement whose answer nobody reads and
   * whose failure may surface on that next statement (it is then the answer of every later statement, commit included).
   */
  readonly held?: boolean
  /** The last statement of a read-only transaction: the transaction's commit is written with it. */
  readonly endsReadOnlyTransaction?: boolean
  /** Never prepared: planned for its own values on every run. */
  readonly plannedPerExecution?: boolean
  /** Prepared, and run from its generic plan from the first run on (inside a transaction). */
  readonly fromGenericPlan?: boolean
}

const NO_FLAGS: StatementFlags = Object.freeze({})

// Keyed by the compiled statement's root node: Kysely hands its connection the CompiledQuery it compiled, and the
// copies precompiled.ts makes for each run keep that node.
const flagsByNode = new WeakMap<RootOperationNode, StatementFlags>()

/** `node` with `flag` added: a node of its own, so the same statement compiled without the flag stays unflagged. */
function flagged(node: RootOperationNode, flag: keyof StatementFlags): RootOperationNode {
  const copy = Object.freeze({ ...node })
  flagsByNode.set(copy, { ...flagsByNode.get(node), [flag]: true })
  return copy
}

function flagging(flag: keyof StatementFlags): KyselyPlugin {
  return {
    // Added last (withPlugin appends), so no later plugin replaces the node the compiler puts into the CompiledQuery.
    transformQuery: ({ node }) => flagged(node, flag),
    transformResult: async ({ result }) => result,
  }
}

const HELD = flagging('held')
const ENDS_READ_ONLY_TRANSACTION = flagging('endsReadOnlyTransaction')
const PLANNED_PER_EXECUTION = flagging('plannedPerExecution')
const FROM_GENERIC_PLAN = flagging('fromGenericPlan')

type Pluggable<Q> = { withPlugin(plugin: KyselyPlugin): Q }

/** The flags of a statement as Kysely hands it to a connection. */
export function flagsOf(query: CompiledQuery): StatementFlags {
  return flagsByNode.get(query.query) ?? NO_FLAGS
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
 * A read that is the last statement of every transaction it runs in: in a read-only transaction (every GET) the
 * pipelined driver writes the transaction's commit with it, so the request needs one round trip in all. Nothing may
 * run in the transaction after it; elsewhere the flag changes nothing.
 */
export function endsReadOnlyTransaction<Q extends Pluggable<Q>>(query: Q): Q {
  return query.withPlugin(ENDS_READ_ONLY_TRANSACTION)
}

/**
 * Runs a statement that answers nothing and refuses by raising (a quota check, a tenant binding): the pipelined
 * driver holds it and writes it with the transaction's next statement, so it costs no round trip of its own, and its
 * failure is the answer of that next statement, or of the commit when none follows.
 */
export async function executeHeld(trx: Transaction<DB>, query: RawBuilder<unknown> | CompiledQuery): Promise<void> {
  if ('isRawBuilder' in query) await query.withPlugin(HELD).execute(trx)
  else await trx.executeQuery({ ...query, query: flagged(query.query, 'held') })
}
