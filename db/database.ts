import { CamelCasePlugin, Kysely, PostgresDialect, sql } from 'kysely'
import type pg from 'pg'
import type { DB } from './schema.js'
import { migrateToLatest } from './migrate.js'
import type { RetentionSettings } from './repos/audit/retention-settings.js'
import { PoolHealth } from './driver/pool-health.js'
import { createPool, lendingFrom, type DriverMode } from './driver/pools.js'
import { RuntimeDialect } from './driver/runtime-dialect.js'
import { APP_ROLE, openingStatements, runtimeDatabase } from './tenant-transaction.js'

export { APP_ROLE }
export { createPool, DRIVER_MODES, type DriverMode, type PoolOptions } from './driver/pools.js'

export interface Database {
  /** Runtime handle: every statement runs in a transaction that switched to APP_ROLE, so RLS always applies. */
  readonly db: Kysely<DB>
  readonly kind: 'postgres' | 'embedded'
  /** Applies pending migrations as the owner (DATABASE_MIGRATION_URL, else the connecting user). */
  migrate(): Promise<void>
  /**
   * Runs `work` as the owner on one connection of its own (PostgreSQL: opened for it and closed after; embedded:
   * the owner session), outside any transaction: what the runtime role may not do (partition upkeep).
   */
  asOwner<T>(work: (owner: Kysely<DB>) => Promise<T>): Promise<T>
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
  /** The pg driver (SVC_DB_DRIVER): `pipelined` (default) or `plain` node-postgres (db/driver/README.md). */
  driver?: DriverMode
  /** Named prepared statements (default true); false behind a pooler that does not track them. */
  preparedStatements?: boolean
  statementTimeoutMs?: number
  connectTimeoutMs?: number
  /** Stored by every `migrate()` as the retention the purges apply; absent, the stored one is left as it is. */
  retention?: RetentionSettings
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000
const DEFAULT_CONNECT_TIMEOUT_MS = 2000

/** A handle over an owner pool (migrations, fixtures, operations): Kysely's own, transactions included. */
export function kyselyOver(pool: pg.Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins: [new CamelCasePlugin()] })
}

/** The readiness query: parameterised, in a transaction, as every request's statements are. */
export async function probeRequestPath(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ answer: number }>`select ${42}::int as answer`.execute(db)
  if (rows[0]?.answer !== 42) throw new Error(`probe query answered ${JSON.stringify(rows)}`)
}

/**
 * PostgreSQL through a pool that keeps no session state on a server connection: the role and the statement
 * timeout are set inside every transaction (db/tenant-transaction.ts), so the URL may point at a transaction pooler
 * and name a login role that owns nothing (a member of APP_ROLE).
 */
export function openPostgres(connectionString: string, poolMax: number, options: PostgresOptions = {}): Database {
  const driver = options.driver ?? 'pipelined'
  const health = new PoolHealth()
  const preparedStatements = options.preparedStatements ?? true
  const session = { role: APP_ROLE, statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS }
  const opening = openingStatements(session, false)
  const pool = createPool(connectionString, poolMax, {
    driver,
    runtime: { opening, statementTimeoutMs: session.statementTimeoutMs },
    preparedStatements,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    health,
  })
  const lend = lendingFrom(pool, driver, opening)
  // Kysely ends its driver only if it ever started it, and transactions borrow the pool without it: close ends the
  // pool either way, once.
  let ended: Promise<void> | undefined
  const endPool = () => (ended ??= pool.end())
  const asOwner = async <T>(work: (owner: Kysely<DB>) => Promise<T>): Promise<T> => {
    const owner = kyselyOver(createPool(options.migrationUrl ?? connectionString, 1, { driver, preparedStatements }))
    try {
      return await work(owner)
    } finally {
      await owner.destroy()
    }
  }
  const db = runtimeDatabase(new RuntimeDialect(lend, endPool), lend, session)
  return {
    db,
    kind: 'postgres',
    migrate: async () => {
      await asOwner((owner) => migrateToLatest(owner, options.retention))
    },
    asOwner,
    async probe() {
      await probeRequestPath(db)
      const problem = health.problem()
      if (problem) throw new Error(problem)
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close() {
      await db.destroy()
      await endPool()
    },
  }
}
