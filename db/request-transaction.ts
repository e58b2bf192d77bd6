import type { Kysely } from 'kysely'
import { RequestScopeRefused, scopeRefusalOf, type ScopeRefusal } from './errors.js'
import type { ConnectionLender, LentTransaction } from './lent-connection.js'
import type { DB } from './schema.js'
import { openRequestScope, type TenantTx } from './tenant.js'

/** Whom a request transaction acts for: the tenant, and the access token and user to check (null for signed calls). */
export interface RequestScope {
  tenantId: number
  accessJti: string | null
  userId: number | null
  /**
   * The request only reads (GET, HEAD): the transaction is read only, so PostgreSQL refuses any write in it, and
   * its last read may carry its commit (ENDS_READ_ONLY_TRANSACTION in db/statement-cache.ts).
   */
  readOnly?: boolean
}

/**
 * How a request transaction ended. `refused`: the request scope refused the access token (svc_request_scope), so
 * nothing the transaction did counts. `failed`: the commit did not happen (the database went away or refused it).
 * A rollback that fails only because the connection broke is still `rolled-back`: the server ends the transaction
 * with the session; `brokenConnection` says so for the log.
 */
export type TransactionEnd =
  | { outcome: 'committed' }
  | { outcome: 'rolled-back'; brokenConnection?: unknown }
  | { outcome: 'refused'; refusal: ScopeRefusal }
  | { outcome: 'failed'; error: unknown }

export interface RequestTransaction {
  /** The tenant-bound transaction the request's repositories use. */
  readonly db: TenantTx
  /** Commits or rolls back, once, and says what happened; never throws. */
  end(wanted: 'commit' | 'rollback'): Promise<TransactionEnd>
}

/**
 * Opens the transaction one request runs in: begin, then the request scope statement (tenant, revocation, status),
 * which on PostgreSQL travels with the request's first statement. A refused token therefore surfaces on that
 * statement, or on `end` when the request sent none.
 */
export async function openRequestTransaction(db: Kysely<DB>, scope: RequestScope): Promise<RequestTransaction> {
  const trx = await begin(db, scope.readOnly === true)
  let tenantTrx: TenantTx
  try {
    tenantTrx = await openRequestScope(trx.db, scope.tenantId, scope.accessJti, scope.userId)
  } catch (error) {
    await trx.rollback().catch(() => undefined)
    // The embedded store raises a refusal here, on the scope statement itself.
    const refusal = scopeRefusalOf(error)
    throw refusal ? new RequestScopeRefused(refusal) : error
  }
  let ended: Promise<TransactionEnd> | null = null
  return {
    db: tenantTrx,
    end: (wanted) => (ended ??= wanted === 'commit' ? commit(trx) : rollback(trx)),
  }
}

// PostgreSQL pools lend their connections directly (db/lent-connection.ts); the embedded store goes through Kysely's
// own controlled transaction.
const lenders = new WeakMap<Kysely<DB>, ConnectionLender>()

/** Makes request transactions on `db` run on connections `lender` lends (called where the pool is opened). */
export function lendConnections(db: Kysely<DB>, lender: ConnectionLender): void {
  lenders.set(db, lender)
}

async function begin(db: Kysely<DB>, readOnly: boolean): Promise<LentTransaction> {
  const lender = lenders.get(db)
  if (lender) return lender.begin(readOnly)
  const builder = db.startTransaction()
  const trx = await (readOnly ? builder.setAccessMode('read only') : builder).execute()
  return { db: trx, commit: () => trx.commit().execute(), rollback: () => trx.rollback().execute() }
}

async function commit(trx: LentTransaction): Promise<TransactionEnd> {
  try {
    await trx.commit()
    return { outcome: 'committed' }
  } catch (error) {
    // The connection of a failed commit is still lent until a rollback gives it back.
    await trx.rollback().catch(() => undefined)
    const refusal = scopeRefusalOf(error)
    return refusal ? { outcome: 'refused', refusal } : { outcome: 'failed', error }
  }
}

async function rollback(trx: LentTransaction): Promise<TransactionEnd> {
  try {
    await trx.rollback()
    return { outcome: 'rolled-back' }
  } catch (error) {
    // The request sent no statement, so the scope check travelled with this rollback.
    const refusal = scopeRefusalOf(error)
    return refusal ? { outcome: 'refused', refusal } : { outcome: 'rolled-back', brokenConnection: error }
  }
}

/**
 * Runs `fn` in a request transaction of its own (work outside HTTP requests that acts for a caller's token: the
 * in-process contract, an idempotency claim) and commits; rolls back when `fn` throws. A refused token throws
 * RequestScopeRefused, whether it surfaced on a statement of `fn` or on the end.
 */
export async function withRequestTransaction<T>(db: Kysely<DB>, scope: RequestScope, fn: (trx: TenantTx) => Promise<T>): Promise<T> {
  const transaction = await openRequestTransaction(db, scope)
  let result: T
  try {
    result = await fn(transaction.db)
  } catch (error) {
    const end = await transaction.end('rollback')
    const refusal = end.outcome === 'refused' ? end.refusal : scopeRefusalOf(error)
    throw refusal ? new RequestScopeRefused(refusal) : error
  }
  const end = await transaction.end('commit')
  if (end.outcome === 'refused') throw new RequestScopeRefused(end.refusal)
  if (end.outcome === 'failed') throw end.error
  return result
}
