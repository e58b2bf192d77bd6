import pg from 'pg'
import { inject } from 'vitest'

/**
 * Runs one statement as the run's owner on a connection of its own, for `create database` and `drop database`
 * (they cannot run inside a transaction, nor against the database they name).
 */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}
