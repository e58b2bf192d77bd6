import { PGlite, types } from '@electric-sql/pglite'
import { CamelCasePlugin, CompiledQuery, Kysely, PGliteDialect, type PGlite as KyselyPGlite, type QueryResult } from 'kysely'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { DEFAULT_STATEMENT_TIMEOUT_MS, probeRequestPath, type Database } from './database.js'
import { LentConnection } from './driver/lent-connection.js'
import type { PooledConnection } from './driver/pooled-connection.js'
import { acquireEmbeddedLock, type EmbeddedLock } from './embedded-lock.js'
import { migrateToLatest } from './migrate.js'
import type { RetentionSettings } from './repos/audit/retention-settings.js'
import type { DB } from './schema.js'
import { APP_ROLE, runtimeDatabase } from './tenant-transaction.js'

export interface EmbeddedDatabase extends Database {
  readonly kind: 'embedded'
  /** Absolute path of the PGlite data directory. */
  readonly dataDir: string
  /**
   * The owner (PGlite superuser) over the same single session, for migrations, fixtures and operations scripts. Each
   * of its queries or transactions borrows the one connection exclusively, so no runtime query ever sees the owner.
   * Never await it while holding a runtime connection (inside a runtime transaction): that would wait for itself.
   */
  readonly owner: Kysely<DB>
}

/** Where the store lives inside SVC_DATA_DIR. */
export function embeddedDataDir(svcDataDir: string): string {
  return resolve(svcDataDir, 'pglite')
}

/**
 * Creates the runtime role when the store is new. The embedded store is its own server, so this plays the part of a
 * container's init script: the session can then switch to the role before its first query, migrated or not, and RLS
 * applies from the start. The first migration finds the role and only grants it privileges.
 */
const BOOTSTRAP_ROLE = `
  do $$
  begin
    if not exists (select 1 from pg_roles where rolname = '${APP_ROLE}') then
      create role ${APP_ROLE} nologin nosuperuser nobypassrls noinherit;
    end if;
  end
  $$`

/**
 * The embedded session as a runtime transaction uses it: its statements go one by one through the runtime handle's
 * only connection, which the transaction holds (Kysely's mutex) until it ends.
 */
function lendSession(db: Kysely<DB>): Promise<LentConnection> {
  return new Promise((lent, failed) => {
    // Without plugins: the transaction's own handle transforms the results once.
    db.withoutPlugins()
      .connection()
      .execute((session) => new Promise<void>((release) => lent(new LentConnection(sessionConnection(session), release))))
      .catch(failed)
  })
}

function sessionConnection(session: Kysely<DB>): PooledConnection {
  return {
    async open(opening) {
      for (const statement of opening) await session.executeQuery(statement)
    },
    execute: <R>(query: CompiledQuery) => session.executeQuery(query) as Promise<QueryResult<R>>,
    async end(statement) {
      await session.executeQuery(CompiledQuery.raw(statement))
    },
  }
}

/**
 * An embedded PostgreSQL-compatible store (PGlite, in process) under `${svcDataDir}/pglite`, for development and
 * tests without a server. Same migrations, same RLS: its one session runs as APP_ROLE for every runtime query, and
 * only `migrate()` and `owner` step back to the superuser, while holding the connection. One connection serialises
 * everything: concurrent requests wait their turn instead of running side by side. One process per directory.
 * Transactions open as on PostgreSQL (db/tenant-transaction.ts); PGlite does not enforce their time limit.
 */
export function openEmbedded(
  svcDataDir: string,
  options: { statementTimeoutMs?: number; retention?: RetentionSettings } = {},
): EmbeddedDatabase {
  const dataDir = embeddedDataDir(svcDataDir)
  let pglite: PGlite | undefined
  let lock: EmbeddedLock | undefined

  // Started by Kysely on the first query of either handle, so nothing runs before the role switch.
  const start = async (): Promise<PGlite> => {
    mkdirSync(dataDir, { recursive: true })
    // PGlite aborts the process (or corrupts the store) when a second process opens the directory: refuse it first.
    lock = acquireEmbeddedLock(`${dataDir}.lock`, dataDir)
    // 64-bit ids and counts as JS numbers, as the pg pool returns them (db/database.ts); ids stay below 2^53.
    const instance = new PGlite(dataDir, { parsers: { [types.INT8]: (value: string) => Number(value) } })
    try {
      await instance.waitReady
      await instance.exec(BOOTSTRAP_ROLE)
      // Session-level on purpose, as on a pooled PostgreSQL connection: nothing at run time can bypass RLS.
      await instance.exec(`set role ${APP_ROLE}`)
    } catch (error) {
      // Kysely retries a failed start; a second instance must never open the same directory beside this one.
      await instance.close().catch(() => undefined)
      lock.release()
      throw error
    }
    pglite = instance
    return instance
  }

  const db = runtimeDatabase(new PGliteDialect({ pglite: start }), lendSession, {
    role: APP_ROLE,
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
  })

  /**
   * Runs `work` as the owner while holding the runtime handle's only connection (Kysely's mutex), so no runtime query
   * can interleave while the session is not APP_ROLE. If the switch back fails the store is closed: fail closed
   * rather than leave a superuser session behind.
   */
  const asOwner = <T>(work: (instance: PGlite) => Promise<T>): Promise<T> =>
    db.connection().execute(async () => {
      const instance = pglite
      if (!instance) throw new Error('embedded store is not open')
      await instance.exec('reset role')
      try {
        return await work(instance)
      } finally {
        await instance.exec(`set role ${APP_ROLE}`).catch(async (error: unknown) => {
          await instance.close().catch(() => undefined)
          throw new Error('embedded store closed: could not return to the runtime role', { cause: error })
        })
      }
    })

  // The subset of PGlite that Kysely's dialect uses, routed through asOwner.
  const ownerSession: KyselyPGlite = {
    get closed() {
      return pglite?.closed ?? false
    },
    ready: true,
    waitReady: Promise.resolve(),
    query: (text, params, options) => asOwner((instance) => instance.query(text, params, options)),
    transaction: (fn) => asOwner((instance) => instance.transaction(fn)),
    // The runtime handle owns the instance; destroying the owner handle must not close it.
    close: async () => undefined,
  }
  const owner = new Kysely<DB>({
    dialect: new PGliteDialect({ pglite: ownerSession }),
    plugins: [new CamelCasePlugin()],
  })

  return {
    db,
    kind: 'embedded',
    dataDir,
    owner,
    migrate: async () => {
      await migrateToLatest(owner, options.retention)
    },
    asOwner: (work) => work(owner),
    probe: () => probeRequestPath(db),
    close: async () => {
      await owner.destroy()
      await db.destroy()
      lock?.release()
    },
  }
}

/** The message server.ts logs when it runs on the embedded store. */
export function embeddedWarning(dataDir: string): string {
  return `embedded PGlite store under ${dataDir}: for development only; set DATABASE_URL for PostgreSQL`
}
