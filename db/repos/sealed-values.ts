import { sql, type Kysely } from 'kysely'
import type { DB } from '../schema.js'
import type { TenantTx } from '../tenant-transaction.js'

// The values sealed under the data keys (lib/crypto/seal.ts), for the start's check of the key ring and for the
// reseal (lib/data-keys/reseal.ts). A re-seal changes how a secret is stored, never the secret: no updated_at moves.

/** What is sealed: a TOTP secret, one waiting for its first code, a set of recovery codes' key, a webhook secret. */
export type SealedKind = 'totp_secret' | 'pending_totp_secret' | 'recovery_code_key' | 'webhook_secret'

export interface SealedKeyCount {
  kind: SealedKind
  /** The kid the values name; null for those of the legacy key, which name none. */
  keyId: string | null
  sealed: number
  /** Whose values two of them are (the least and the greatest owner; the same one when there is one). */
  samples: SealedOwner[]
}

/** Whose sealed value it is: a user's, or (userId null) the tenant's webhook secret. */
export interface SealedOwner {
  tenantId: number
  userId: number | null
}

interface CountRow {
  kind: SealedKind
  keyId: string | null
  sealed: string | number
  firstTenantId: string | number
  firstUserId: string | number | null
  lastTenantId: string | number
  lastUserId: string | number | null
}

const ownerOf = (tenantId: string | number, userId: string | number | null): SealedOwner => ({
  tenantId: Number(tenantId),
  userId: userId === null ? null : Number(userId),
})

/** How many values each key holds, across tenants, through svc_sealed_key_ids() (counts and ids, SECURITY DEFINER). */
export async function countSealedByKey(db: Kysely<DB>): Promise<SealedKeyCount[]> {
  const { rows } = await sql<CountRow>`
    select kind, key_id, sealed, first_tenant_id, first_user_id, last_tenant_id, last_user_id from svc_sealed_key_ids()`.execute(db)
  return rows.map((row) => {
    const first = ownerOf(row.firstTenantId, row.firstUserId)
    const last = ownerOf(row.lastTenantId, row.lastUserId)
    const same = first.tenantId === last.tenantId && first.userId === last.userId
    return { kind: row.kind, keyId: row.keyId, sealed: Number(row.sealed), samples: same ? [first] : [first, last] }
  })
}

/** The value of `kind` its owner holds now, in the owner's tenant transaction; null when there is none (any more). */
export async function readSealedValue(trx: TenantTx, kind: SealedKind, owner: SealedOwner): Promise<string | null> {
  if (kind === 'webhook_secret') {
    return (await trx.selectFrom('webhookEndpoints').select('secretSealed').where('tenantId', '=', owner.tenantId).executeTakeFirst())?.secretSealed ?? null
  }
  const row = await trx
    .selectFrom('userSecondFactors')
    .select(['totpSecret', 'totpPendingSecret', 'recoveryKeySealed'])
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId ?? 0)
    .executeTakeFirst()
  if (!row) return null
  return kind === 'totp_secret' ? row.totpSecret : kind === 'pending_totp_secret' ? row.totpPendingSecret : row.recoveryKeySealed
}

/** The next `limit` tenants after `afterId`, for work that goes tenant by tenant (tenants has no RLS). */
export async function tenantIdsAfter(db: Kysely<DB>, afterId: number, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('tenants').select('id').where('id', '>', afterId).orderBy('id').limit(limit).execute()
  return rows.map((row) => row.id)
}

/** One user's sealed columns, as the reseal reads them. */
export interface SealedFactors {
  userId: number
  totpSecret: string | null
  totpPendingSecret: string | null
  recoveryKeySealed: string | null
  hasRecoveryCodes: boolean
}

export type SealedFactorColumn = 'totpSecret' | 'totpPendingSecret' | 'recoveryKeySealed'

const hasCodes = sql<boolean>`exists (select 1 from user_recovery_codes r where r.tenant_id = f.tenant_id and r.user_id = f.user_id)`

/**
 * The next `limit` users of the tenant after `afterUserId` with a sealed value that does not begin with `prefix` (the
 * first key's), or, when `keylessSets`, a set of recovery codes without a key of its own.
 */
export function sealedFactorsToMove(
  trx: TenantTx,
  tenantId: number,
  prefix: string,
  keylessSets: boolean,
  afterUserId: number,
  limit: number,
): Promise<SealedFactors[]> {
  const elsewhere = (column: 'totp_secret' | 'totp_pending_secret' | 'recovery_key_sealed') =>
    sql<boolean>`(${sql.ref(`f.${column}`)} is not null and not starts_with(${sql.ref(`f.${column}`)}, ${prefix}))`
  return trx
    .selectFrom('userSecondFactors as f')
    .select(['f.userId', 'f.totpSecret', 'f.totpPendingSecret', 'f.recoveryKeySealed', hasCodes.as('hasRecoveryCodes')])
    .where('f.tenantId', '=', tenantId)
    .where('f.userId', '>', afterUserId)
    .where((eb) =>
      eb.or([
        elsewhere('totp_secret'),
        elsewhere('totp_pending_secret'),
        elsewhere('recovery_key_sealed'),
        ...(keylessSets ? [eb.and([eb('f.recoveryKeySealed', 'is', null), hasCodes])] : []),
      ]),
    )
    .orderBy('f.userId')
    .limit(limit)
    .execute()
}

/**
 * Replaces one sealed column of the user's row, only while it still holds `from` (a request may have replaced it
 * since it was read: that value is already the service's to keep); true when it did. A keyless set gains its key only
 * while its codes live.
 */
export async function replaceSealedFactor(
  trx: TenantTx,
  owner: { tenantId: number; userId: number },
  column: SealedFactorColumn,
  from: string | null,
  to: string,
): Promise<boolean> {
  const result = await trx
    .updateTable('userSecondFactors as f')
    .set({ [column]: to })
    .where('f.tenantId', '=', owner.tenantId)
    .where('f.userId', '=', owner.userId)
    .where((eb) => (from === null ? eb.and([eb(`f.${column}`, 'is', null), hasCodes]) : eb(`f.${column}`, '=', from)))
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** The tenant's sealed webhook secret when it does not begin with `prefix`. */
export async function webhookSecretToMove(trx: TenantTx, prefix: string): Promise<string | undefined> {
  const row = await trx
    .selectFrom('webhookEndpoints')
    .select('secretSealed')
    .where(sql<boolean>`not starts_with(secret_sealed, ${prefix})`)
    .executeTakeFirst()
  return row?.secretSealed
}

/** Replaces the tenant's sealed webhook secret while it still holds `from`; true when it did. */
export async function replaceSealedWebhookSecret(trx: TenantTx, from: string, to: string): Promise<boolean> {
  const result = await trx.updateTable('webhookEndpoints').set({ secretSealed: to }).where('secretSealed', '=', from).executeTakeFirst()
  return result.numUpdatedRows > 0n
}
