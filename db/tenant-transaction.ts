import { CamelCasePlugin, CompiledQuery, Kysely, type Dialect, type DialectAdapter, type Driver, type Transaction } from 'kysely'
import { ConnectionLender, type LentConnection, type LentTransaction } from './driver/lent-connection.js'
import { executeHeld } from './driver/statement-flags.js'
import { RequestScopeRefused, scopeRefusalOf, TenantContextMissing, type ScopeRefusal } from './errors.js'
import type { DB } from './schema.js'

declare const tenantScoped: unique symbol

/**
 * A transaction whose opening bound the tenant GUC (`withTenant`, `openRequestTransaction`, `bindTenant` below).
 * Repositories of RLS tables take this type, so passing the root `Kysely<DB>` (or an unscoped transaction) is a
 * compile error.
 */
export type TenantTx = Transaction<DB> & { readonly [tenantScoped]: true }

/** The role every runtime statement runs as: not superuser, owns no table, no BYPASSRLS (see the first migration). */
export const APP_ROLE = 'svc_app'

/** What every transaction of a runtime database sets for itself (never the connection). */
export interface RuntimeSession {
  /** The role RLS applies to; the login role must be a member of it. */
  role: string
  /** `statement_timeout` of each transaction, in milliseconds. */
  statementTimeoutMs: number
}

// The role name comes from code (APP_ROLE), never from input; quoting keeps it an identifier all the same.
const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * How every runtime transaction opens, before its tenant binding. Both settings are `local`: they end with the
 * transaction, so a transaction pooler may hand the server connection to anyone afterwards, and even a login role
 * that is the owner or a superuser never runs a statement outside RLS. The runtime pool opens the transaction of a
 * lone statement (outside any transaction) with the same statements. Plain SET statements rather than one
 * `select set_config(...)`: a utility statement is parsed and run without planning, which is what it costs on every
 * transaction where nothing is prepared (behind a pooler).
 */
export function openingStatements(session: RuntimeSession, readOnly: boolean): CompiledQuery[] {
  return [
    CompiledQuery.raw(readOnly ? 'begin read only' : 'begin'),
    CompiledQuery.raw(`set local role ${quoteIdentifier(session.role)}`),
    CompiledQuery.raw(`set local statement_timeout = ${Math.trunc(session.statementTimeoutMs)}`),
  ]
}

/** Whom a request transaction acts for: the tenant, and the access token and user to check (null for signed calls). */
export interface RequestScope {
  tenantId: number
  accessJti: string | null
  userId: number | null
  /**
   * The request only reads (GET, HEAD): the transaction is read only, so PostgreSQL refuses any write in it, and
   * its last read may carry its commit (endsReadOnlyTransaction in db/driver/statement-flags.ts).
   */
  readOnly?: boolean
  /** The API key the request presented: its own checks (svc_api_key_scope) replace the access token's. */
  apiKeyId?: number | null
}

/**
 * A request's tenant binding: binds the tenant GUC first (so the users lookup is under the caller's RLS), then
 * checks the access token against the revocation list and, for a user's token, that the tenant and the user are
 * still ACTIVE. A refused token makes it raise (SV004 revoked, SV010 tenant, SV015 user, SV003 a tenant or user
 * that does not exist; read by `scopeRefusalOf` in db/errors.ts), which aborts the transaction before any later
 * statement of it runs. The checks live in PL/pgSQL (db/functions/svc_request_scope.sql), planned once per server
 * session even when no statement is prepared, as behind a transaction pooler.
 */
export function requestScopeStatement(scope: RequestScope): CompiledQuery {
  const { tenantId, accessJti, userId, apiKeyId } = scope
  // An API key: the key must be live and the creator's, the creator an ACTIVE OWNER or MANAGER, the tenant ACTIVE
  // (db/functions/svc_api_key_scope.sql), checked on every request like a token's revocation.
  if (apiKeyId != null) return CompiledQuery.raw('select svc_api_key_scope($1::bigint, $2::bigint, $3::bigint)', [tenantId, apiKeyId, userId])
  return CompiledQuery.raw('select svc_request_scope($1::bigint, $2::uuid, $3::bigint)', [tenantId, accessJti, userId])
}

/** The tenant binding of work outside requests: for the rest of the transaction only, as a bound parameter. */
export function tenantBindingStatement(tenantId: number): CompiledQuery {
  return CompiledQuery.raw("select set_config('app.tenant_id', $1, true)", [String(tenantId)])
}

export function isTenantId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}

interface Opener {
  lender: ConnectionLender
  readWrite: readonly CompiledQuery[]
  readOnly: readonly CompiledQuery[]
}

// Keyed by the handle's adapter, which Kysely creates once per handle and shares with the handles derived from it
// (withPlugin, withoutPlugins, withSchema), so they open their transactions here too.
const openers = new WeakMap<DialectAdapter, Opener>()

/**
 * The runtime handle over `dialect`, whose transactions this file opens on connections `lend` lends, for `session`.
 * Kysely's own `transaction()` and `startTransaction()` would open a transaction without the statements above: the
 * handle refuses them.
 */
export function runtimeDatabase(
  dialect: Dialect,
  lend: (db: Kysely<DB>) => Promise<LentConnection>,
  session: RuntimeSession,
): Kysely<DB> {
  const guarded = refusingTransactions(dialect)
  const db = new Kysely<DB>({ dialect: guarded, plugins: [new CamelCasePlugin()] })
  openers.set(db.getExecutor().adapter, {
    lender: new ConnectionLender(() => lend(db), guarded),
    readWrite: openingStatements(session, false),
    readOnly: openingStatements(session, true),
  })
  return db
}

/** Opens a transaction on `db`: the opening statements, then `binding` when given. */
function begin(db: Kysely<DB>, binding: CompiledQuery | null, readOnly: boolean): Promise<LentTransaction> {
  if (db.isTransaction) return Promise.reject(new Error('a transaction cannot open another: pass it to the work instead'))
  const opener = openers.get(db.getExecutor().adapter)
  if (!opener) return Promise.reject(new Error('not a runtime database: open it with db/open.ts or db/database.ts'))
  const opening = readOnly ? opener.readOnly : opener.readWrite
  return opener.lender.begin(db, binding ? [...opening, binding] : opening, readOnly)
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
 * Opens the transaction one request runs in: the opening statements (read only for GET and HEAD), then the request
 * scope. The pipelined driver writes them all with the request's first statement, so a refused token surfaces on
 * that statement, or on `end` when the request sent none; the plain driver and the embedded store send them now,
 * and a refused token throws RequestScopeRefused here.
 */
export async function openRequestTransaction(db: Kysely<DB>, scope: RequestScope): Promise<RequestTransaction> {
  if (!isTenantId(scope.tenantId)) throw new TenantContextMissing()
  let trx: LentTransaction
  try {
    trx = await begin(db, requestScopeStatement(scope), scope.readOnly === true)
  } catch (error) {
    const refusal = scopeRefusalOf(error)
    throw refusal ? new RequestScopeRefused(refusal) : error
  }
  let ended: Promise<TransactionEnd> | null = null
  return {
    db: trx.db as TenantTx,
    end: (wanted) => (ended ??= wanted === 'commit' ? commit(trx) : rollback(trx)),
  }
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
export async function withRequestTransaction<T>(
  db: Kysely<DB>,
  scope: RequestScope,
  fn: (trx: TenantTx) => Promise<T>,
): Promise<T> {
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

/**
 * Runs `fn` in one transaction bound to `tenantId` and commits; rolls back when `fn` throws. For work outside HTTP
 * requests (dispatch, delivery reports, login, scripts), which opens a transaction for every step: the pipelined
 * driver writes the binding with the step's first statement, so it costs no round trip of its own.
 */
export async function withTenant<T>(db: Kysely<DB>, tenantId: number, fn: (trx: TenantTx) => Promise<T>): Promise<T> {
  // Fail closed before any data access: no query runs without a tenant.
  if (!isTenantId(tenantId)) throw new TenantContextMissing()
  return runAndEnd(await begin(db, tenantBindingStatement(tenantId), false), (trx) => fn(trx as TenantTx))
}

/**
 * Runs `fn` in a runtime transaction with no tenant bound yet (RLS shows it no tenant's rows), for work that first
 * writes a table without RLS (a new tenant) and then binds that tenant with `bindTenant`.
 */
export async function withServiceTransaction<T>(db: Kysely<DB>, fn: (root: Transaction<DB>) => Promise<T>): Promise<T> {
  return runAndEnd(await begin(db, null, false), fn)
}

/** Binds `tenantId` for the rest of a transaction of `withServiceTransaction`. */
export async function bindTenant(root: Transaction<DB>, tenantId: number): Promise<TenantTx> {
  if (!isTenantId(tenantId)) throw new TenantContextMissing()
  await executeHeld(root, tenantBindingStatement(tenantId))
  return root as TenantTx
}

async function runAndEnd<T>(trx: LentTransaction, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  let result: T
  try {
    result = await fn(trx.db)
  } catch (error) {
    await trx.rollback().catch(() => undefined)
    throw error
  }
  try {
    await trx.commit()
  } catch (error) {
    await trx.rollback().catch(() => undefined)
    throw error
  }
  return result
}

/** `dialect` with Kysely's own transactions refused: they would open without the opening statements. */
function refusingTransactions(dialect: Dialect): Dialect {
  const refuse = async () => {
    throw new Error('a runtime transaction opens through db/tenant-transaction.ts (withTenant, withRequestTransaction, ...)')
  }
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: (): Driver => {
      const driver = dialect.createDriver()
      return {
        init: (options) => driver.init(options),
        acquireConnection: (options) => driver.acquireConnection(options),
        releaseConnection: (connection, options) => driver.releaseConnection(connection, options),
        destroy: (options) => driver.destroy(options),
        beginTransaction: refuse,
        commitTransaction: refuse,
        rollbackTransaction: refuse,
      }
    },
  }
}
