import type { TenantTx } from '../../tenant-transaction.js'

/**
 * Replaces the user's password hash only if it is still `previousHash`, the one the current password was checked
 * against outside this transaction; false when another change came first (then this one proved an old password).
 */
export async function replacePasswordHash(
  trx: TenantTx,
  userId: number,
  previousHash: string,
  passwordHash: string,
): Promise<boolean> {
  const result = await trx
    .updateTable('users')
    .set({ passwordHash, updatedAt: new Date() })
    .where('id', '=', userId)
    .where('passwordHash', '=', previousHash)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
