import type { Env } from '../lib/env.js'
import { openPostgres, type Database } from './database.js'
import { embeddedWarning, openEmbedded } from './embedded.js'

export interface OpenedDatabase extends Database {
  /** Set when the store is not fit for production; the caller logs it once at start. */
  readonly warning?: string
}

/** PostgreSQL when DATABASE_URL is set, else the embedded development store under SVC_DATA_DIR. */
export async function openDatabase(env: Env): Promise<OpenedDatabase> {
  if (env.DATABASE_URL) return openPostgres(env.DATABASE_URL, env.SVC_DB_POOL_MAX)
  const embedded = openEmbedded(env.SVC_DATA_DIR)
  return { ...embedded, warning: embeddedWarning(embedded.dataDir) }
}
