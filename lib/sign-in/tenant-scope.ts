import type { Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import { type TenantTx, withTenant } from '../../db/tenant-transaction.js'

/**
 * The explicit tenant context every user-administration call of the contract runs in: a tenant id (the call
 * opens and commits its own tenant transaction), or a transaction the caller already holds for that tenant (the
 * call joins it, so it commits or rolls back with the caller's work; a request handler passes `request.db`,
 * which also keeps the embedded single-connection database from waiting on itself).
 */
export type TenantScope = number | { tenantId: number; trx: TenantTx }

export function inTenant<T>(
  db: Kysely<DB>,
  scope: TenantScope,
  fn: (trx: TenantTx, tenantId: number) => Promise<T>,
): Promise<T> {
  if (typeof scope === 'number') return withTenant(db, scope, (trx) => fn(trx, scope))
  return fn(scope.trx, scope.tenantId)
}
