import { sql, type Kysely, type Transaction } from 'kysely'
import { TenantContextMissing } from './errors.js'
import { precompiled } from './precompiled.js'
import { SENT_WITH_NEXT } from './statement-cache.js'
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

/**
 * Binds the tenant for the rest of the transaction only (`is_local = true`), as a bound parameter. Held back by the
 * pg client and written with the transaction's next statement (SENT_WITH_NEXT): nobody reads its answer, and
 * work outside requests (dispatch, delivery reports, login) opens a transaction for every step, so it would
 * otherwise cost each of them a round trip.
 */
export async function setTenant(trx: Transaction<DB>, tenantId: number): Promise<TenantTx> {
  if (!isTenantId(tenantId)) {
    // Fail closed before any data access: no query runs without a tenant.
    throw new TenantContextMissing()
  }
  await sql`select set_config('app.tenant_id', ${String(tenantId)}, true) ${sql.raw(SENT_WITH_NEXT)}`.execute(trx)
  return trx as TenantTx
}

// Every authenticated request sends this first: compiled once (db/precompiled.ts), held back by the pg client and
// written together with the request's next statement (SENT_WITH_NEXT). The checks live in svc_request_scope (a
// PL/pgSQL function, so PostgreSQL plans its lookups once per server session even when no statement is prepared,
// as behind a transaction pooler); it binds the tenant first, so the users lookup is under the caller's RLS.
const requestScope = precompiled((_db, params: { tenantId: number; jti: string | null; userId: number | null }) =>
  sql`select svc_request_scope(${params.tenantId}::bigint, ${params.jti}::uuid, ${params.userId}::bigint) ${sql.raw(SENT_WITH_NEXT)}`,
)

/**
 * A request transaction's first statement: binds the tenant and checks the caller's access token against the
 * revocation list (a table without tenant data, so RLS does not affect the check) and, for a user's token, that
 * the tenant and the user are still ACTIVE. A refused token makes the statement raise (SQLSTATE SV004 revoked,
 * SV010 tenant, SV015 user, SV003 a tenant or user that does not exist; read by `scopeRefusalOf` in
 * db/errors.ts), which aborts the transaction before any later statement
 * of it runs. On PostgreSQL the error arrives with the transaction's next statement, or its commit or rollback
 * when it sends none; the embedded store raises it here. Without a user (signed internal calls) only the tenant
 * is bound.
 */
export async function openRequestScope(
  trx: Transaction<DB>,
  tenantId: number,
  accessJti: string | null,
  userId: number | null,
): Promise<TenantTx> {
  if (!isTenantId(tenantId)) throw new TenantContextMissing()
  await requestScope(trx, { tenantId, jti: accessJti, userId })
  return trx as TenantTx
}

/** Runs `fn` in one transaction bound to `tenantId`; for work outside HTTP requests (scripts, dispatch). */
export async function withTenant<T>(
  db: Kysely<DB>,
  tenantId: number,
  fn: (trx: TenantTx) => Promise<T>,
): Promise<T> {
  if (!isTenantId(tenantId)) throw new TenantContextMissing()
  return db.transaction().execute(async (trx) => fn(await setTenant(trx, tenantId)))
}
