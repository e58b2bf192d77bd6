import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../schema.js'

// No RLS on this table (digests and expiry times only), so both the root handle and any transaction may use it.

/**
 * Records an accepted signature; false when it was recorded before (a replay). Inside the request transaction,
 * so a call that is refused later (rolled back) does not use its signature up, and a concurrent replay waits on
 * the primary key until this one commits or rolls back.
 */
export async function claimSignature(db: Kysely<DB> | Transaction<DB>, signature: string, expiresAt: Date): Promise<boolean> {
  const claimed = await db
    .insertInto('usedInternalSignatures')
    .values({ signature, expiresAt })
    .onConflict((oc) => oc.column('signature').doNothing())
    .returning('signature')
    .executeTakeFirst()
  return claimed !== undefined
}

/** Deletes signatures whose call can no longer be accepted anyway (stale timestamp); returns the count. */
export async function purgeUsedSignatures(db: Kysely<DB>): Promise<number> {
  const result = await db.deleteFrom('usedInternalSignatures').where('expiresAt', '<', sql<Date>`now()`).executeTakeFirst()
  return Number(result.numDeletedRows)
}
