import type { Kysely } from 'kysely'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createPool, kyselyOver, openPostgres } from '../../db/database.js'
import type { DB } from '../../db/schema.js'
import { onCleanup } from './cleanup.js'
import { benchConfig } from './config.js'

export interface BenchDatabase {
  name: string
  url: string
  /** Owner connection (migrating user): fixtures and bulk SQL, bypassing the runtime role. */
  owner: Kysely<DB>
  /** A raw owner pool, for polling and EXPLAIN. */
  ownerPool: pg.Pool
}

/** The owner pools of this run's databases, while they exist. */
const openDatabases = new Map<string, pg.Pool>()

/**
 * Refreshes the planner's statistics of every database of this run, as autovacuum keeps a live database's. A
 * scenario fills its fresh database in seconds, long before autovacuum's next look (a minute): without this, plans
 * made while the tables were empty stayed cached (prepared statements, foreign-key checks) and a scenario measured
 * them. A send's idempotency-key lookup, planned on the empty table, read every key of the tenant: 10 senders of
 * one tenant went from 321 to 260 sends/s in two runs, and to 560 once the database was analyzed.
 */
export async function analyzeBenchDatabases(): Promise<void> {
  for (const pool of openDatabases.values()) await pool.query('analyze')
}

export function databaseUrl(serverUrl: string, database: string): string {
  const parsed = new URL(serverUrl)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

function assertLoopback(url: string): void {
  const host = new URL(url).hostname
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) {
    throw new Error(`benchmarks only load a loopback PostgreSQL, not ${host}`)
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/\D/g, '').slice(0, 14)
}

/**
 * A fresh database for this run, dropped when the run ends; migrated to this checkout's latest schema, or with
 * `migrate: false` left empty for the first service instance to migrate with its own code (another commit's).
 */
export async function createBenchDatabase(options: { migrate?: boolean } = {}): Promise<BenchDatabase> {
  assertLoopback(benchConfig.pgUrl)
  const name = `svc_bench_${stamp()}_${randomBytes(2).toString('hex')}`
  const admin = new pg.Client({ connectionString: benchConfig.pgUrl })
  await admin.connect()
  try {
    await admin.query(`create database ${name}`)
    for (const setting of benchConfig.pgSettings) {
      await admin.query(`alter database ${name} set ${setting.name} = '${setting.value}'`)
    }
  } finally {
    await admin.end()
  }
  const url = databaseUrl(benchConfig.pgUrl, name)
  onCleanup(`drop database ${name}`, async () => {
    const dropper = new pg.Client({ connectionString: benchConfig.pgUrl })
    await dropper.connect()
    try {
      // Every process that used it has been stopped by now; FORCE ends connections still closing.
      await dropper.query(`drop database if exists ${name} with (force)`)
    } finally {
      await dropper.end()
    }
  })

  if (options.migrate ?? true) {
    const database = openPostgres(url, 1)
    try {
      await database.migrate()
    } finally {
      await database.close()
    }
  }
  const ownerPool = createPool(url, 4)
  const owner = kyselyOver(ownerPool)
  openDatabases.set(name, ownerPool)
  onCleanup('close owner connection', () => {
    openDatabases.delete(name)
    return owner.destroy()
  })
  return { name, url, owner, ownerPool }
}

export async function serverVersion(): Promise<string> {
  const client = new pg.Client({ connectionString: benchConfig.pgUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ server_version: string }>('show server_version')
    return rows[0]?.server_version ?? 'unknown'
  } finally {
    await client.end()
  }
}
