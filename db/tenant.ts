import { sql, type Kysely, type Transaction } from 'kysely'
import { AppError } from '../lib/errors.js'
import { precompiled } from './precompiled.js'
import type { DB } from './schema.js'

declare const tenantScoped: unique symbol

/**
 * A transaction whose first statement bound the tenant GUC. Repositories of RLS tables take this type, so
 * passing the root `Kysely<DB>` (or an unscoped transaction) is a compile error.
 */
export type TenantTx = Transaction<DB> & { readonly [tenantScoped]: true }

export function isTenantId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}

/** Binds the tenant for the rest of the transaction only (`is_local = true`), as a bound parameter. */
export async function setTenant(trx: Transaction<DB>, tenantId: number): Promise<TenantTx> {
  if (!isTenantId(tenantId)) {
    // Fail closed before any data access: no query runs without a tenant.
    throw new AppError('INTERNAL_ERROR', 'missing or invalid tenant context')
  }
  await sql`select set_config('app.tenant_id', ${String(tenantId)}, true)`.execute(trx)
  return trx as TenantTx
}

// Every authenticated request sends this first: compiled once (db/precompiled.ts).
const requestScope = precompiled((_db, params: { tenantId: string; jti: string | null }) =>
  sql<{ revoked: boolean }>`
    select set_config('app.tenant_id', ${params.tenantId}, true) as tenant,
           exists (select 1 from revoked_access_tokens where jti = ${params.jti}::uuid) as revoked`,
)

/**
 * A request transaction's first statement: binds the tenant and, in the same round trip, checks the caller's
 * access token against the revocation list (a table without tenant data, so RLS does not affect the check).
 */
export async function openRequestScope(
  trx: Transaction<DB>,
  tenantId: number,
  accessJti: string | null,
): Promise<{ tenantTrx: TenantTx; revoked: boolean }> {
  if (!isTenantId(tenantId)) throw new AppError('INTERNAL_ERROR', 'missing or invalid tenant context')
  const [row] = await requestScope(trx, { tenantId: String(tenantId), jti: accessJti })
  return { tenantTrx: trx as TenantTx, revoked: row?.revoked === true }
}

/** Runs `fn` in one transaction bound to `tenantId`; for work outside HTTP requests (scripts, dispatch). */
export async function withTenant<T>(
  db: Kysely<DB>,
  tenantId: number,
  fn: (trx: TenantTx) => Promise<T>,
): Promise<T> {
  if (!isTenantId(tenantId)) throw new AppError('INTERNAL_ERROR', 'missing or invalid tenant context')
  return db.transaction().execute(async (trx) => fn(await setTenant(trx, tenantId)))
}
