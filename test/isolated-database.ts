import type { Kysely } from 'kysely'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { createPool, kyselyOver, openPostgres } from '../db/database.js'
import type { DB } from '../db/schema.js'

export interface IsolatedDatabase {
  url: string
  /** Owner connection (bypasses RLS) for fixtures and assertions. */
  owner: Kysely<DB>
  drop(): Promise<void>
}

async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/**
 * A migrated database of its own, for tests of cross-tenant work (the dispatcher claims due messages of every
 * tenant), so other test files' messages never reach it and its messages never reach them.
 */
export async function isolatedDatabase(): Promise<IsolatedDatabase> {
  const name = `svc_iso_${randomBytes(5).toString('hex')}`
  await admin(`create database ${name}`)
  const url = new URL(inject('databaseUrl'))
  url.pathname = `/${name}`
  const database = openPostgres(url.toString(), 1)
  await database.migrate()
  await database.close()
  const owner = kyselyOver(createPool(url.toString(), 3))
  return {
    url: url.toString(),
    owner,
    async drop() {
      await owner.destroy()
      await admin(`drop database if exists ${name} with (force)`)
    },
  }
}
