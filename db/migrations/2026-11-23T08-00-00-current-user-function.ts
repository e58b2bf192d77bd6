import type { Kysely } from 'kysely'

// GET /v1/me read its user and tenant with one join the service sent as its own statement. Behind a transaction
// pooler nothing is prepared, and PostgreSQL planned that join (with the users RLS policy) on every request; in a
// PL/pgSQL function it is planned once per server session. SECURITY INVOKER: the users row stays under RLS.
// svc_current_user lives in db/functions and is applied after the migrations (db/function-files.ts); this migration
// stays listed because databases record that it ran.
export async function up(_db: Kysely<any>): Promise<void> {}
