import type { Kysely } from 'kysely'
import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { createPool, kyselyOver, openPostgres, type Database } from '../../db/database.js'
import type { DB } from '../../db/schema.js'
import { adminQuery } from './admin-query.js'
import { databaseDriver, embeddedStore, isEmbedded, openTestDatabase, testEnv } from './helper.js'
import { withDatabase } from './database-url.js'
import { runtimeUrl } from './runtime-role.js'

export interface IsolatedDatabase {
  /**
   * PostgreSQL URL for `buildTestApp({ DATABASE_URL: iso.url })`, as the least-privilege runtime login role; '' on
   * the embedded store, meaning the file's store.
   */
  url: string
  /** The same database as the owner (DATABASE_MIGRATION_URL); '' on the embedded store. */
  ownerUrl: string
  /** Owner connection (bypasses RLS) for fixtures and assertions. */
  owner: Kysely<DB>
  /** The runtime database (as svc_app) over it, for code under test that takes a `Database`; close it when done. */
  open(poolMax: number): Database
  drop(): Promise<void>
}

/**
 * A migrated database of its own, for tests of cross-tenant work (the dispatcher claims due messages of every
 * tenant), so other test files' messages never reach it and its messages never reach them. On the embedded store
 * every test file already works on a store of its own (test/support/helper.ts), so that store is the isolated database:
 * call this once per file there. `migrated: false` (PostgreSQL only) leaves it empty, for tests of the migrator.
 */
export async function isolatedDatabase({ migrated = true } = {}): Promise<IsolatedDatabase> {
  if (isEmbedded) {
    const store = embeddedStore()
    return { url: '', ownerUrl: '', owner: store.owner, open: () => openTestDatabase(testEnv()), drop: async () => undefined }
  }
  const name = `svc_iso_${randomBytes(5).toString('hex')}`
  await adminQuery(`create database ${name}`)
  const url = withDatabase(inject('databaseUrl'), name)
  if (migrated) {
    const database = openPostgres(url, 1)
    await database.migrate()
    await database.close()
  }
  const owner = kyselyOver(createPool(url, 3))
  return {
    url: runtimeUrl(url),
    ownerUrl: url,
    owner,
    open: (poolMax) => openPostgres(runtimeUrl(url), poolMax, { migrationUrl: url, driver: databaseDriver }),
    async drop() {
      await owner.destroy()
      await adminQuery(`drop database if exists ${name} with (force)`)
    },
  }
}
