import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../schema.js'

// No RLS on this table (token ids only), so both the root handle and any transaction may use it.
export async function revokeAccessToken(db: Kysely<DB> | Transaction<DB>, jti: string, expiresAt: Date): Promise<void> {
  await db.insertInto('revokedAccessTokens').values({ jti, expiresAt }).onConflict((oc) => oc.column('jti').doNothing()).execute()
}
