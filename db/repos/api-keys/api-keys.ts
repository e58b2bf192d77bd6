import { sql, type Kysely, type Selectable } from 'kysely'
import type { ApiKeysTable, DB, Role } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

/** A key as its owner sees it: never its hash or lookup id. */
export type ApiKeyRecord = Pick<Selectable<ApiKeysTable>, 'id' | 'name' | 'scopes' | 'prefix' | 'createdAt' | 'expiresAt' | 'lastUsedAt'>

const COLUMNS = ['id', 'name', 'scopes', 'prefix', 'createdAt', 'expiresAt', 'lastUsedAt'] as const

/**
 * The tenant and id of the key with this lookup id, before any tenant is known: through svc_api_key_directory,
 * which answers ids only (api_key_directory has no RLS and the runtime role cannot read it). Takes the root handle.
 */
export async function findApiKeyTenant(db: Kysely<DB>, lookupId: string): Promise<{ tenantId: number; apiKeyId: number } | undefined> {
  const { rows } = await sql<{ tenantId: string; apiKeyId: string }>`
    select tenant_id, api_key_id from svc_api_key_directory(${lookupId})`.execute(db)
  const row = rows[0]
  return row ? { tenantId: Number(row.tenantId), apiKeyId: Number(row.apiKeyId) } : undefined
}

/** What a request through the key needs that never changes for the key: its hash, scopes, expiry and creator. */
export interface ApiKeyCredential {
  keyHash: Buffer
  scopes: string[]
  expiresAt: Date | null
  createdBy: number
  creatorRole: Role
  tenantSlug: string
}

/** The key's fixed parts, read in its tenant's transaction (under RLS); the creator's role as it is now. */
export function findApiKeyCredential(trx: TenantTx, apiKeyId: number): Promise<ApiKeyCredential | undefined> {
  return trx
    .selectFrom('apiKeys as k')
    .innerJoin('users as u', (join) => join.onRef('u.tenantId', '=', 'k.tenantId').onRef('u.id', '=', 'k.createdBy'))
    .innerJoin('tenants as t', 't.id', 'k.tenantId')
    .select(['k.keyHash', 'k.scopes', 'k.expiresAt', 'k.createdBy', 'u.role as creatorRole', 't.slug as tenantSlug'])
    .where('k.id', '=', apiKeyId)
    .executeTakeFirst()
}

/**
 * Serialises key creation per tenant for the rest of the transaction, so two creations at once cannot both see
 * room for one more key.
 */
export async function lockApiKeyCreation(trx: TenantTx, tenantId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('api_keys'), ${tenantId}::int)`.execute(trx)
}

/** Keys neither revoked nor expired at `now`. */
export async function countLiveApiKeys(trx: TenantTx, now: Date): Promise<number> {
  const row = await trx
    .selectFrom('apiKeys')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('revokedAt', 'is', null)
    .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]))
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

export function insertApiKey(
  trx: TenantTx,
  key: { tenantId: number; lookupId: string; name: string; scopes: string[]; prefix: string; keyHash: Buffer; createdBy: number; expiresAt: Date | null },
): Promise<ApiKeyRecord> {
  return trx.insertInto('apiKeys').values(key).returning(COLUMNS).executeTakeFirstOrThrow()
}

/** The tenant's keys that are not revoked (expired ones included, so the owner sees why a key stopped), newest first. */
export function listApiKeys(trx: TenantTx): Promise<ApiKeyRecord[]> {
  return trx.selectFrom('apiKeys').select(COLUMNS).where('revokedAt', 'is', null).orderBy('createdAt', 'desc').orderBy('id', 'desc').execute()
}

/** Revokes a key that is not revoked yet; undefined when there is none of that id. */
export function revokeApiKey(trx: TenantTx, id: number, now: Date): Promise<{ id: number; name: string } | undefined> {
  return trx
    .updateTable('apiKeys')
    .set({ revokedAt: now })
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .returning(['id', 'name'])
    .executeTakeFirst()
}

/**
 * Records a use of the key, unless one was recorded less than a minute before `now`: whatever the number of
 * instances, a key's row is written at most once a minute.
 */
export async function touchApiKey(trx: TenantTx, id: number, now: Date): Promise<boolean> {
  const result = await trx
    .updateTable('apiKeys')
    .set({ lastUsedAt: now })
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .where((eb) => eb.or([eb('lastUsedAt', 'is', null), eb('lastUsedAt', '<=', sql<Date>`${now}::timestamptz - interval '1 minute'`)]))
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * Takes `wanted` more requests from a key's budget for the current one-minute window (rate_limit_windows, shared
 * by every instance): the requests counted so far in the window, these included, and when the window ends.
 */
export async function reserveKeyBudget(db: Kysely<DB>, budgetKey: string, wanted: number): Promise<{ hits: number; resetsAt: Date }> {
  const { rows } = await sql<{ hits: number; windowStart: Date }>`
    insert into rate_limit_windows as w (key, window_start, hits)
    values (${budgetKey}, date_trunc('minute', now()), ${wanted})
    on conflict (key, window_start) do update set hits = w.hits + ${wanted}
    returning hits, window_start`.execute(db)
  const row = rows[0]!
  return { hits: row.hits, resetsAt: new Date(row.windowStart.getTime() + 60_000) }
}
