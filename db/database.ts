import { CamelCasePlugin, CompiledQuery, Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { DB } from './schema.js'
import { migrateToLatest } from './migrate.js'
import { ServiceClient } from './pg-client.js'

/** The role every runtime query runs as: not superuser, owns no table, no BYPASSRLS (see the first migration). */
export const APP_ROLE = 'svc_app'

export interface Database {
  /** Runtime handle: every connection has switched to APP_ROLE, so RLS always applies. */
  readonly db: Kysely<DB>
  readonly kind: 'postgres' | 'embedded'
  /** Applies pending migrations as the connecting (owner) user. */
  migrate(): Promise<void>
  close(): Promise<void>
}

// 64-bit ids and counts arrive as strings by default; every id here stays far below 2^53.
const int8AsNumber: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
}

export function createPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    types: int8AsNumber,
    idleTimeoutMillis: 30_000,
    Client: ServiceClient,
    pipeline: true,
  })
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

export function kyselyOver(pool: pg.Pool, role?: string): Kysely<DB> {
  return new Kysely<DB>({
    dialect: new PostgresDialect({
      pool,
      // Session-level on purpose: a pooled connection never returns to the owner role, so nothing at run time
      // can bypass RLS, inside a tenant transaction or outside one.
      onCreateConnection: role
        ? async (connection) => {
            await connection.executeQuery(CompiledQuery.raw(`set role ${role}`))
          }
        : undefined,
    }),
    plugins: [new CamelCasePlugin()],
  })
}

export function openPostgres(connectionString: string, poolMax: number): Database {
  const db = kyselyOver(createPool(connectionString, poolMax), APP_ROLE)
  return {
    db,
    kind: 'postgres',
    async migrate() {
      const owner = kyselyOver(createPool(connectionString, 1))
      try {
        await migrateToLatest(owner)
      } finally {
        await owner.destroy()
      }
    },
    close: () => db.destroy(),
  }
}
