import { CamelCasePlugin, Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import type { DB } from './schema.js'
import { migrateToLatest } from './migrate.js'
import { ServiceClient, type RuntimeSession, type ServiceClientConfig } from './pg-client.js'
import { PoolHealth } from './pool-health.js'
import { ConnectionLender } from './lent-connection.js'
import { lendConnections } from './request-transaction.js'

/** The role every runtime query runs as: not superuser, owns no table, no BYPASSRLS (see the first migration). */
export const APP_ROLE = 'svc_app'

export interface Database {
  /** Runtime handle: every statement runs in a transaction that switched to APP_ROLE, so RLS always applies. */
  readonly db: Kysely<DB>
  readonly kind: 'postgres' | 'embedded'
  /** Applies pending migrations as the owner (DATABASE_MIGRATION_URL, else the connecting user). */
  migrate(): Promise<void>
  /** Resolves when a parameterised query answers through the request path; rejects saying why not. */
  probe(): Promise<void>
  /** The runtime pool's connections now (metrics); absent where there is no pool (the embedded store). */
  poolStats?(): PoolStats
  close(): Promise<void>
}

export interface PoolStats {
  total: number
  idle: number
  /** Queries waiting for a connection. */
  waiting: number
}

export interface PostgresOptions {
  /** The owner migrations connect as; default the runtime URL. */
  migrationUrl?: string
  /** Named prepared statements (default true); false behind a pooler that does not track them. */
  preparedStatements?: boolean
  statementTimeoutMs?: number
  connectTimeoutMs?: number
}

export interface PoolOptions {
  runtime?: RuntimeSession
  preparedStatements?: boolean
  connectTimeoutMs?: number
  health?: PoolHealth
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 5000
const DEFAULT_CONNECT_TIMEOUT_MS = 2000
// The server cancels a statement at its timeout; the client gives up a little later, for a server that cannot
// answer at all (frozen, or a network that drops packets), and drops that connection.
const READ_TIMEOUT_MARGIN_MS = 1000

// 64-bit ids and counts arrive as strings by default; every id here stays far below 2^53.
const int8AsNumber: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
}

export function createPool(connectionString: string, max: number, options: PoolOptions = {}): pg.Pool {
  const config: ServiceClientConfig & pg.PoolConfig = {
    connectionString,
    max,
    types: int8AsNumber,
    idleTimeoutMillis: 30_000,
    Client: ServiceClient,
    pipeline: true,
    keepAlive: true,
    runtime: options.runtime,
    preparedStatements: options.preparedStatements,
    onStatementError: options.health ? (error) => options.health!.noteStatementError(error) : undefined,
    // Both bound waiting for a free connection and opening a new one.
    connectionTimeoutMillis: options.connectTimeoutMs,
    query_timeout: options.runtime ? options.runtime.statementTimeoutMs + READ_TIMEOUT_MARGIN_MS : undefined,
  }
  const pool = new pg.Pool(config)
  // An idle connection the server ends (restart, failover, an administrator) is dropped by the pool and replaced
  // on next use; without a listener, pg would turn that into an uncaught exception that kills the process.
  pool.on('error', (error) => {
    process.emitWarning(`idle PostgreSQL connection closed: ${error.message}`, { code: 'SVC_DB_IDLE_ERROR' })
  })
  // A transaction that ended without sending a statement never reached the server: its held statements must
  // not open a transaction for the connection's next user.
  pool.on('release', (_error, client) => {
    if (client instanceof ServiceClient) client.dropHeldStatements()
  })
  return pool
}

export function kyselyOver(pool: pg.Pool): Kysely<DB> {
  const dialect = new PostgresDialect({ pool })
  const db = new Kysely<DB>({ dialect, plugins: [new CamelCasePlugin()] })
  lendConnections(db, new ConnectionLender(pool, db, dialect))
  return db
}

/** The readiness query: parameterised, in a transaction, as every request's statements are. */
export async function probeRequestPath(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ answer: number }>`select ${42}::int as answer`.execute(db)
  if (rows[0]?.answer !== 42) throw new Error(`probe query answered ${JSON.stringify(rows)}`)
}

/**
 * PostgreSQL through a pool that keeps no session state on a server connection (db/pg-client.ts): the role and the
 * statement timeout are set inside every transaction, so the URL may point at a transaction pooler and name a login
 * role that owns nothing (a member of APP_ROLE).
 */
export function openPostgres(connectionString: string, poolMax: number, options: PostgresOptions = {}): Database {
  const health = new PoolHealth()
  const preparedStatements = options.preparedStatements ?? true
  const pool = createPool(connectionString, poolMax, {
    runtime: { role: APP_ROLE, statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS },
    preparedStatements,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    health,
  })
  const db = kyselyOver(pool)
  return {
    db,
    kind: 'postgres',
    async migrate() {
      const owner = kyselyOver(createPool(options.migrationUrl ?? connectionString, 1, { preparedStatements }))
      try {
        await migrateToLatest(owner)
      } finally {
        await owner.destroy()
      }
    },
    async probe() {
      await probeRequestPath(db)
      const problem = health.problem()
      if (problem) throw new Error(problem)
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  }
}
