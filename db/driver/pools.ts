import type { CompiledQuery } from 'kysely'
import pg from 'pg'
import { LentConnection } from './lent-connection.js'
import { ServiceClient, type ServiceClientConfig } from './pg-client.js'
import type { PoolHealth } from './pool-health.js'
import { PipelinedConnection, PlainConnection } from './pooled-connection.js'

/**
 * SVC_DB_DRIVER: `pipelined` (default) is ServiceClient (pg-client.ts), which batches, holds and prepares; `plain`
 * is stock node-postgres, one statement per round trip, for debugging and for poolers the pipelined client does not
 * suit. Both keep no session state on a server connection.
 */
export const DRIVER_MODES = ['pipelined', 'plain'] as const
export type DriverMode = (typeof DRIVER_MODES)[number]

/** What makes a pool a runtime pool. */
export interface RuntimePoolSettings {
  /** The statements that open a transaction (db/tenant-transaction.ts); a lone statement runs in one opened with them. */
  opening: readonly CompiledQuery[]
  /** `statement_timeout` of each transaction, in milliseconds (the client's read timeout follows from it). */
  statementTimeoutMs: number
}

export interface PoolOptions {
  /** Default `pipelined`. */
  driver?: DriverMode
  /** Set on the runtime pool; unset on owner pools (migrations, fixtures). */
  runtime?: RuntimePoolSettings
  /** Named prepared statements (pipelined only; default true); false behind a pooler that does not track them. */
  preparedStatements?: boolean
  connectTimeoutMs?: number
  health?: PoolHealth
}

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

const ignore = () => undefined

export function createPool(connectionString: string, max: number, options: PoolOptions = {}): pg.Pool {
  const config: pg.PoolConfig = {
    connectionString,
    max,
    types: int8AsNumber,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // Both bound waiting for a free connection and opening a new one.
    connectionTimeoutMillis: options.connectTimeoutMs,
    query_timeout: options.runtime ? options.runtime.statementTimeoutMs + READ_TIMEOUT_MARGIN_MS : undefined,
  }
  const pool = options.driver === 'plain' ? new pg.Pool(config) : pipelinedPool(config, options)
  // An idle connection the server ends (restart, failover, an administrator) is dropped by the pool and replaced
  // on next use; without a listener, pg would turn that into an uncaught exception that kills the process.
  pool.on('error', (error) => {
    process.emitWarning(`idle PostgreSQL connection closed: ${error.message}`, { code: 'SVC_DB_IDLE_ERROR' })
  })
  // pg-pool stops listening to a client while it is checked out: one that breaks then (the server went away, a read
  // timeout destroyed it) reports the failure on its queries, and the pool drops it on release. ServiceClient
  // listens for itself.
  if (options.driver === 'plain') pool.on('connect', (client) => client.on('error', ignore))
  return pool
}

function pipelinedPool(config: pg.PoolConfig, options: PoolOptions): pg.Pool {
  const health = options.health
  const pool = new pg.Pool({
    ...config,
    Client: ServiceClient,
    pipeline: true,
    opening: options.runtime?.opening.map((query) => ({ text: query.sql, values: query.parameters })),
    preparedStatements: options.preparedStatements,
    onStatementError: health ? (error) => health.noteStatementError(error) : undefined,
  } as ServiceClientConfig & pg.PoolConfig)
  // A transaction that ended without sending a statement never reached the server: its held statements must
  // not open a transaction for the connection's next user.
  pool.on('release', (_error, client) => {
    if (client instanceof ServiceClient) client.dropHeldStatements()
  })
  return pool
}

/**
 * Lends the connections of a runtime pool made by `createPool` with the same `driver` and `opening`: each lent
 * connection serves one transaction or one lone statement, then goes back to the pool.
 */
export function lendingFrom(
  pool: pg.Pool,
  driver: DriverMode,
  opening: readonly CompiledQuery[],
): () => Promise<LentConnection> {
  return async () => {
    const client = await pool.connect()
    const connection =
      driver === 'plain' ? new PlainConnection(client, opening) : new PipelinedConnection(client as unknown as ServiceClient)
    return new LentConnection(connection, () => client.release())
  }
}
