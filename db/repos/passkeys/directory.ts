import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schema.js'

/**
 * The tenant and user of a credential id, from passkey_directory (no RLS: read before any tenant is known) through
 * svc_find_passkey_owner, which answers ids only; undefined for an unknown credential.
 */
export async function findPasskeyOwner(db: Kysely<DB>, credentialId: string): Promise<{ tenantId: number; userId: number } | undefined> {
  const { rows } = await sql<{ tenantId: number | null; userId: number | null }>`
    select tenant_id, user_id from svc_find_passkey_owner(${credentialId})`.execute(db)
  const row = rows[0]
  return row && row.tenantId !== null && row.userId !== null ? { tenantId: row.tenantId, userId: row.userId } : undefined
}
