import { sql, type Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import { uniqueAddress } from './auth-fixtures.js'

/** The database's current one-minute window, the one the per-address limiter counts in. */
async function minute(db: Kysely<DB>): Promise<number> {
  return (await sql<{ minute: Date }>`select date_trunc('minute', now()) as minute`.execute(db)).rows[0]!.minute.getTime()
}

/**
 * The limiter counts per one-minute window. Runs `scenario` with a fresh client address and repeats it (once) when
 * the window turned over while it ran, so a minute boundary never decides the outcome. `db` reads the database's
 * clock (the limiter's), as the owner.
 */
export async function inOneRateWindow(db: Kysely<DB>, scenario: (address: string) => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const before = await minute(db)
    try {
      await scenario(uniqueAddress())
      return
    } catch (error) {
      if (attempt > 0 || (await minute(db)) === before) throw error
    }
  }
}
