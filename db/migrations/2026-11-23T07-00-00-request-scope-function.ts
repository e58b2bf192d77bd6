import type { Kysely } from 'kysely'

// The request scope was one SQL statement with four subqueries. Behind a transaction pooler the service sends no
// named statements, so PostgreSQL parsed and planned that statement on every request; in a PL/pgSQL function its
// queries are planned once per server session and the statement the service sends is a plain function call.
// SECURITY INVOKER: the tenant and user lookups run as the caller (svc_app), under RLS, after the tenant is bound.
// svc_request_scope lives in db/functions and is applied after the migrations (db/function-files.ts); this migration
// stays listed because databases record that it ran.
export async function up(_db: Kysely<any>): Promise<void> {}
