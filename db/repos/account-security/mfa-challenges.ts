import { sql } from 'kysely'
import type { TenantTx } from '../../tenant-transaction.js'

/** Stores a login attempt's second step: the token's hash, for `userId`, until `ttlSeconds` from now. */
export async function insertMfaChallenge(
  trx: TenantTx,
  challenge: { tenantId: number; tokenHash: string; userId: number; ttlSeconds: number },
): Promise<void> {
  await trx
    .insertInto('mfaChallenges')
    .values({
      tenantId: challenge.tenantId,
      tokenHash: challenge.tokenHash,
      userId: challenge.userId,
      expiresAt: sql<Date>`now() + make_interval(secs => ${challenge.ttlSeconds})`,
    })
    .execute()
}

/**
 * The user of a live (unexpired) challenge, its row locked until the transaction ends when `lock`: of two second
 * steps with one token, the second waits for the first and then finds the row gone if the first used it.
 */
export async function findMfaChallenge(trx: TenantTx, tenantId: number, tokenHash: string, lock: boolean): Promise<number | null> {
  const query = trx
    .selectFrom('mfaChallenges')
    .select('userId')
    .where('tenantId', '=', tenantId)
    .where('tokenHash', '=', tokenHash)
    .where('expiresAt', '>', sql<Date>`now()`)
  const row = await (lock ? query.forUpdate() : query).executeTakeFirst()
  return row?.userId ?? null
}

export async function deleteMfaChallenge(trx: TenantTx, tenantId: number, tokenHash: string): Promise<void> {
  await trx.deleteFrom('mfaChallenges').where('tenantId', '=', tenantId).where('tokenHash', '=', tokenHash).execute()
}
