import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

/**
 * Where the reading of a tenant's 080 refusal list stands (sms_opt_out_syncs), and the claim that makes one instance
 * at a time read it: a token with a lease, renewed with every page, so a reader that died frees the tenant one lease
 * later and a reader that lost its claim writes nothing more.
 */

export interface SyncCursor {
  senderNumber: string
  /** dateCreated[gte] of the walk in progress. */
  walkFrom: Date | null
  /** The page the walk in progress goes on with; null: a new walk starts at newestSeen. */
  nextKey: string | null
  newestSeen: Date | null
}

/** Tenants whose 080 list may hold refusals (db/functions/svc_opt_out_sync_tenants.sql): ids only. */
export async function tenantsToSync(db: Kysely<DB>, provider: string): Promise<number[]> {
  const { rows } = await sql<{ tenantId: string | number }>`
    select t as "tenantId" from svc_opt_out_sync_tenants(${provider}::varchar) as t`.execute(db)
  return rows.map((row) => Number(row.tenantId))
}

/**
 * Claims the tenant's reading for `leaseSeconds` under `token`, unless another reader holds an unexpired claim
 * (undefined). A reading for another sender number than the stored one starts over: the list is per sender number.
 */
export async function claimSync(
  trx: TenantTx,
  tenantId: number,
  senderNumber: string,
  token: string,
  leaseSeconds: number,
): Promise<SyncCursor | undefined> {
  await sql`
    insert into sms_opt_out_syncs (tenant_id, sender_number) values (${tenantId}, ${senderNumber})
    on conflict (tenant_id) do nothing`.execute(trx)
  const { rows } = await sql<SyncCursor>`
    update sms_opt_out_syncs s set
      claim_token = ${token}::uuid,
      claimed_until = now() + make_interval(secs => ${leaseSeconds}),
      sender_number = ${senderNumber},
      walk_from = case when s.sender_number = ${senderNumber} then s.walk_from end,
      next_key = case when s.sender_number = ${senderNumber} then s.next_key end,
      newest_seen = case when s.sender_number = ${senderNumber} then s.newest_seen end
    where s.tenant_id = ${tenantId} and (s.claimed_until is null or s.claimed_until <= now())
    returning s.sender_number as "senderNumber", s.walk_from as "walkFrom", s.next_key as "nextKey",
      s.newest_seen as "newestSeen"`.execute(trx)
  return rows[0]
}

/**
 * Records a page read, guarded by the claim: the walk goes on at `nextKey` (or ends, null), the newest refusal seen
 * moves forward, the lease is renewed. False when the claim was lost: the caller stops and writes nothing.
 */
export async function advanceSync(
  trx: TenantTx,
  tenantId: number,
  token: string,
  page: { walkFrom: Date | null; nextKey: string | null; newest: Date | null; leaseSeconds: number },
): Promise<boolean> {
  const result = await sql`
    update sms_opt_out_syncs s set
      walk_from = case when ${page.nextKey}::text is null then null else ${page.walkFrom}::timestamptz end,
      next_key = ${page.nextKey},
      newest_seen = greatest(s.newest_seen, ${page.newest}::timestamptz),
      claimed_until = now() + make_interval(secs => ${page.leaseSeconds}),
      synced_at = now()
    where s.tenant_id = ${tenantId} and s.claim_token = ${token}::uuid`.execute(trx)
  return (result.numAffectedRows ?? 0n) > 0n
}

/** Gives the claim back; the cursor stays where the last recorded page left it. */
export async function releaseSync(trx: TenantTx, tenantId: number, token: string): Promise<void> {
  await sql`
    update sms_opt_out_syncs set claim_token = null, claimed_until = null
    where tenant_id = ${tenantId} and claim_token = ${token}::uuid`.execute(trx)
}
