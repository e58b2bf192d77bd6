import { sql, type Selectable } from 'kysely'
import type { UserSecondFactorsTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

export interface FactorOwner {
  tenantId: number
  userId: number
}

export type SecondFactorsRow = Pick<
  Selectable<UserSecondFactorsTable>,
  'totpSecret' | 'totpEnabledAt' | 'totpLastStep' | 'totpPendingSecret' | 'smsEnabledAt' | 'recoveryKeySealed'
>

const COLUMNS = ['totpSecret', 'totpEnabledAt', 'totpLastStep', 'totpPendingSecret', 'smsEnabledAt', 'recoveryKeySealed'] as const

/** The user's factors, locked until the transaction ends when `lock` (every change and every TOTP check locks). */
export function findSecondFactors(trx: TenantTx, owner: FactorOwner, lock = false): Promise<SecondFactorsRow | undefined> {
  const query = trx
    .selectFrom('userSecondFactors')
    .select(COLUMNS)
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
  return (lock ? query.forUpdate() : query).executeTakeFirst()
}

/** Sets some of the user's factor columns, creating the row when the user has none yet. */
export async function upsertSecondFactors(
  trx: TenantTx,
  owner: FactorOwner,
  values: Partial<Pick<SecondFactorsRow, 'totpSecret' | 'totpLastStep' | 'totpPendingSecret' | 'recoveryKeySealed'>> & {
    totpPendingAttempts?: number
    totpEnabledAt?: Date | null
    smsEnabledAt?: Date | null
  },
): Promise<void> {
  await trx
    .insertInto('userSecondFactors')
    .values({ tenantId: owner.tenantId, userId: owner.userId, ...values })
    .onConflict((oc) => oc.columns(['tenantId', 'userId']).doUpdateSet({ ...values, updatedAt: sql`now()` }))
    .execute()
}

/**
 * Takes TOTP step `step` for the user: true when it is later than every step accepted before (and is now the last),
 * false when it was used already. One statement, so two requests with one code cannot both have it.
 */
export async function takeTotpStep(trx: TenantTx, owner: FactorOwner, step: number): Promise<boolean> {
  const result = await trx
    .updateTable('userSecondFactors')
    .set({ totpLastStep: step, updatedAt: sql`now()` })
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .where('totpSecret', 'is not', null)
    .where((eb) => eb.or([eb('totpLastStep', 'is', null), eb('totpLastStep', '<', step)]))
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Counts one wrong code against the pending secret, which is discarded at `maxAttempts`. */
export async function countPendingTotpAttempt(trx: TenantTx, owner: FactorOwner, maxAttempts: number): Promise<void> {
  await trx
    .updateTable('userSecondFactors')
    .set((eb) => ({
      totpPendingAttempts: eb('totpPendingAttempts', '+', 1),
      totpPendingSecret: sql<string | null>`case when totp_pending_attempts + 1 >= ${maxAttempts} then null else totp_pending_secret end`,
      updatedAt: sql`now()`,
    }))
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .execute()
}

/** The user's row, once it holds neither a factor nor an enrolment under way. */
export async function deleteEmptySecondFactors(trx: TenantTx, owner: FactorOwner): Promise<void> {
  await trx
    .deleteFrom('userSecondFactors')
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .where('totpSecret', 'is', null)
    .where('totpPendingSecret', 'is', null)
    .where('smsEnabledAt', 'is', null)
    .execute()
}
