import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

/** Stores the user's creation challenge (its hash), replacing any earlier one, live for `ttlSeconds`. */
export async function putEnrolmentChallenge(
  trx: TenantTx,
  challenge: { tenantId: number; userId: number; challengeHash: string; ttlSeconds: number },
): Promise<void> {
  const expiresAt = sql<Date>`now() + make_interval(secs => ${challenge.ttlSeconds})`
  await trx
    .insertInto('passkeyEnrolmentChallenges')
    .values({ tenantId: challenge.tenantId, userId: challenge.userId, challengeHash: challenge.challengeHash, expiresAt })
    .onConflict((oc) => oc.columns(['tenantId', 'userId']).doUpdateSet({ challengeHash: challenge.challengeHash, expiresAt, createdAt: sql<Date>`now()` }))
    .execute()
}

/**
 * Uses up the user's creation challenge when its hash is `challengeHash` and it is live: one statement, so of two
 * uses only one finds it. True when it was there. Another user's challenge is never this user's row.
 */
export async function takeEnrolmentChallenge(trx: TenantTx, owner: { tenantId: number; userId: number }, challengeHash: string): Promise<boolean> {
  const taken = await trx
    .deleteFrom('passkeyEnrolmentChallenges')
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .where('challengeHash', '=', challengeHash)
    .where('expiresAt', '>', sql<Date>`now()`)
    .returning('userId')
    .executeTakeFirst()
  return taken !== undefined
}

// passkey_sign_in_challenges has no tenant_id and no RLS (no tenant is known yet): these take the root handle.

export async function putSignInChallenge(db: Kysely<DB>, challenge: { id: string; challengeHash: string; ttlSeconds: number }): Promise<void> {
  await db
    .insertInto('passkeySignInChallenges')
    .values({ id: challenge.id, challengeHash: challenge.challengeHash, expiresAt: sql<Date>`now() + make_interval(secs => ${challenge.ttlSeconds})` })
    .execute()
}

/** Uses up a sign-in challenge, live or not (one statement: one use); its hash when it was live, else null. */
export async function takeSignInChallenge(db: Kysely<DB>, id: string): Promise<string | null> {
  const taken = await db
    .deleteFrom('passkeySignInChallenges')
    .where('id', '=', id)
    .returning(['challengeHash', sql<boolean>`expires_at > now()`.as('live')])
    .executeTakeFirst()
  return taken?.live ? taken.challengeHash : null
}
