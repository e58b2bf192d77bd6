import type { Kysely } from 'kysely'

// A refresh used to be nine round trips (tenant read, begin, set_config, session lock, user read, blacklist,
// rotate, commit). This function does the same checks and writes as ONE statement, which is its own transaction.
// SECURITY INVOKER on purpose: it runs as the caller (svc_app), so RLS applies to every tenant table it touches
// once it has bound app.tenant_id. It answers with an outcome instead of raising, so the reuse revocation commits.
// svc_rotate_session lives in db/functions and is applied after the migrations (db/function-files.ts); this
// migration stays listed because databases record that it ran.
export async function up(_db: Kysely<any>): Promise<void> {}
