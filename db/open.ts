import type { Kysely } from 'kysely'
import type { Env } from '../lib/env.js'
import { kyselyOver, openPostgres, type Database, type PostgresOptions } from './database.js'
import { createPool } from './driver/pools.js'
import { embeddedWarning, openEmbedded } from './embedded.js'
import type { RetentionSettings } from './repos/audit/retention-settings.js'
import type { DB } from './schema.js'

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
    retention: retentionSettings(env),
  }
}

/** What a migration run stores as the retention every purge applies (db/repos/audit/retention-settings.ts). */
export function retentionSettings(env: Env): RetentionSettings {
  return { auditDays: env.SVC_AUDIT_RETENTION_DAYS, smsDays: env.SVC_SMS_RETENTION_DAYS }
}

/** PostgreSQL when DATABASE_URL is set, else the embedded development store under SVC_DATA_DIR. */
export async function openDatabase(env: Env): Promise<OpenedDatabase> {
  if (env.DATABASE_URL) return openPostgres(env.DATABASE_URL, env.SVC_DB_POOL_MAX, postgresOptions(env))
  const embedded = openEmbedded(env.SVC_DATA_DIR, {
    statementTimeoutMs: env.SVC_DB_STATEMENT_TIMEOUT_MS,
    retention: retentionSettings(env),
  })
  return { ...embedded, warning: embeddedWarning(embedded.dataDir) }
}

/**
 * The database as its owner (DATABASE_MIGRATION_URL, else DATABASE_URL; the embedded store's owner session when
 * neither is set), for the operations commands that change what the runtime role may not (tenants). One connection.
 */
export function openOwner(env: Env): { db: Kysely<DB>; close(): Promise<void> } {
  const url = env.DATABASE_MIGRATION_URL ?? env.DATABASE_URL
  if (url) {
    const db = kyselyOver(createPool(url, 1, { driver: 'plain', preparedStatements: env.SVC_DB_PREPARED_STATEMENTS }))
    return { db, close: () => db.destroy() }
  }
  const embedded = openEmbedded(env.SVC_DATA_DIR, { statementTimeoutMs: env.SVC_DB_STATEMENT_TIMEOUT_MS })
  return { db: embedded.owner, close: () => embedded.close() }
}
