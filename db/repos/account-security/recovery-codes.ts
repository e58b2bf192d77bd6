import type { TenantTx } from '../../tenant-transaction.js'
import type { FactorOwner } from './second-factors.js'

/** Replaces the user's recovery codes with `codeHashes` (none: the user has no codes any more). */
export async function replaceRecoveryCodes(trx: TenantTx, owner: FactorOwner, codeHashes: readonly string[]): Promise<void> {
  await trx.deleteFrom('userRecoveryCodes').where('tenantId', '=', owner.tenantId).where('userId', '=', owner.userId).execute()
  if (codeHashes.length === 0) return
  await trx
    .insertInto('userRecoveryCodes')
    .values(codeHashes.map((codeHash) => ({ tenantId: owner.tenantId, userId: owner.userId, codeHash })))
    .execute()
}

/** Uses up the code with this hash: true when it was live (it is gone now), false otherwise. */
export async function takeRecoveryCode(trx: TenantTx, owner: FactorOwner, codeHash: string): Promise<boolean> {
  const result = await trx
    .deleteFrom('userRecoveryCodes')
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .where('codeHash', '=', codeHash)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}

export async function countRecoveryCodes(trx: TenantTx, owner: FactorOwner): Promise<number> {
  const row = await trx
    .selectFrom('userRecoveryCodes')
    .select((eb) => eb.fn.countAll<string | number>().as('left'))
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .executeTakeFirstOrThrow()
  return Number(row.left)
}
