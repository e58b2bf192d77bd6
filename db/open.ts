import type { Env } from '../lib/env.js'
import { openPostgres, type Database } from './database.js'

/** PostgreSQL when DATABASE_URL is set. */
export async function openDatabase(env: Env): Promise<Database> {
  if (!env.DATABASE_URL) throw new Error('DATABASE_URL is not set')
  return openPostgres(env.DATABASE_URL, env.SVC_DB_POOL_MAX)
}
