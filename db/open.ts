import type { Env } from '../lib/env.js'
import { openPostgres, type Database, type PostgresOptions } from './database.js'
import { embeddedWarning, openEmbedded } from './embedded.js'

export interface OpenedDatabase extends Database {
  /** Set when the store is not fit for production; the caller logs it once at start. */
  readonly warning?: string
}

/** The PostgreSQL settings of the environment. */
export function postgresOptions(env: Env): PostgresOptions {
  return {
    migrationUrl: env.DATABASE_MIGRATION_URL,
    driver: env.SVC_DB_DRIVER,
    preparedStatements: env.SVC_DB_PREPARED_STATEMENTS,
    statementTimeoutMs: env.SVC_DB_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: env.SVC_DB_CONNECT_TIMEOUT_MS,
  }
}

/** PostgreSQL when DATABASE_URL is set, else the embedded development store under SVC_DATA_DIR. */
export async function openDatabase(env: Env): Promise<OpenedDatabase> {
  if (env.DATABASE_URL) return openPostgres(env.DATABASE_URL, env.SVC_DB_POOL_MAX, postgresOptions(env))
  const embedded = openEmbedded(env.SVC_DATA_DIR, { statementTimeoutMs: env.SVC_DB_STATEMENT_TIMEOUT_MS })
  return { ...embedded, warning: embeddedWarning(embedded.dataDir) }
}
