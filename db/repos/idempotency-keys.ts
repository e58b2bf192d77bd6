import { sql, type Selectable } from 'kysely'
import type { IdempotencyKeysTable } from '../schema.js'
import type { TenantTx } from '../tenant-transaction.js'

/** A key belongs to one (tenant, user, route): docs/api.md#idempotency. */
export type KeyScope = Pick<Selectable<IdempotencyKeysTable>, 'tenantId' | 'userId' | 'route' | 'key'>

type KeyColumns = Pick<Selectable<IdempotencyKeysTable>, 'fingerprint' | 'state' | 'resourceId' | 'statusCode'>

export interface KeyRecord extends KeyColumns {
  /** Past its retention: treated as if it did not exist. */
  expired: boolean
  /**
   * IN_PROGRESS for longer than the claim lasts (SVC_IDEMPOTENCY_CLAIM_SECONDS): its request died with its process,
   * or ended while the database was unreachable and could not give the key back.
   */
  stale: boolean
}

export const KEY_RETENTION_HOURS = 24

// A claim is identified by its stamp (created_at): a takeover writes a new one, so the original holder can tell
// it lost the key. Stamps are cut to milliseconds so they survive the round trip through a JS Date exactly and
// compare equal later (timestamptz itself keeps microseconds).
const claimStamp = sql<Date>`date_trunc('milliseconds', now())`
const expiry = sql<Date>`now() + make_interval(hours => ${KEY_RETENTION_HOURS})`
const staleClaim = (claimSeconds: number) =>
  sql<boolean>`(state = 'IN_PROGRESS' and created_at < now() - make_interval(secs => ${claimSeconds}))`

function whereKey(scope: KeyScope) {
  return { tenantId: scope.tenantId, userId: scope.userId, route: scope.route, key: scope.key }
}

/**
 * A plain read (no lock): a duplicate sees the committed state at once instead of queueing behind the first.
 * `claimSeconds`: how long an IN_PROGRESS claim holds the key before it counts as stale.
 */
export function findKey(trx: TenantTx, scope: KeyScope, claimSeconds: number): Promise<KeyRecord | undefined> {
  return trx
    .selectFrom('idempotencyKeys')
    .select(['fingerprint', 'state', 'resourceId', 'statusCode'])
    .select([sql<boolean>`expires_at <= now()`.as('expired'), staleClaim(claimSeconds).as('stale')])
    .where((eb) => eb.and(whereKey(scope)))
    .executeTakeFirst()
}

/** Claims a new key; undefined when another request has it already. Returns the claim stamp. */
export async function insertKey(trx: TenantTx, scope: KeyScope, fingerprint: string): Promise<Date | undefined> {
  const row = await trx
    .insertInto('idempotencyKeys')
    .values({ ...whereKey(scope), fingerprint, state: 'IN_PROGRESS', createdAt: claimStamp, expiresAt: expiry })
    .onConflict((oc) => oc.doNothing())
    .returning('createdAt')
    .executeTakeFirst()
  return row?.createdAt
}

/**
 * Re-claims an expired key or a stale IN_PROGRESS one (older than `claimSeconds`). The condition is re-checked by the UPDATE itself: of two
 * retries racing for the same key, the second waits for the first's row lock, then finds a fresh claim that no
 * longer matches, and gets undefined.
 */
export async function takeOverKey(
  trx: TenantTx,
  scope: KeyScope,
  fingerprint: string,
  claimSeconds: number,
): Promise<Date | undefined> {
  const row = await trx
    .updateTable('idempotencyKeys')
    .set({ fingerprint, state: 'IN_PROGRESS', resourceId: null, statusCode: null, createdAt: claimStamp, expiresAt: expiry })
    .where((eb) => eb.and(whereKey(scope)))
    .where((eb) => eb.or([sql<boolean>`expires_at <= now()`, staleClaim(claimSeconds)]))
    .returning('createdAt')
    .executeTakeFirst()
  return row?.createdAt
}

/**
 * Marks the claim COMPLETED inside the request transaction, so the key and the resource commit together.
 * False when the claim is no longer ours (taken over once it was older than the claim seconds).
 */
export async function completeKey(
  trx: TenantTx,
  scope: KeyScope,
  stamp: Date,
  resourceId: number,
  statusCode: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('idempotencyKeys')
    .set({ state: 'COMPLETED', resourceId, statusCode })
    .where((eb) => eb.and(whereKey(scope)))
    .where('state', '=', 'IN_PROGRESS')
    .where('createdAt', '=', stamp)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * Forgets an unfinished claim so the client may retry with the same key. A claim whose request committed is
 * COMPLETED and stays: this is safe to run whatever the outcome was.
 */
export async function releaseKey(trx: TenantTx, scope: KeyScope, stamp: Date): Promise<void> {
  await trx
    .deleteFrom('idempotencyKeys')
    .where((eb) => eb.and(whereKey(scope)))
    .where('state', '=', 'IN_PROGRESS')
    .where('createdAt', '=', stamp)
    .execute()
}
