import type { Kysely } from 'kysely'

// A login sent 14 statements. Its bcrypt comparison keeps both cores busy, so every round trip is taken from
// bcrypt's share; these two functions make the login's admission and its session writes one call each.
// SECURITY INVOKER on purpose: they run as the caller (svc_app), so RLS applies to every tenant table they touch,
// inside the tenant transaction the caller opened.
// svc_login_admit and svc_login_open_session live in db/functions and are applied after the migrations
// (db/function-files.ts); this migration stays listed because databases record that it ran.
export async function up(_db: Kysely<any>): Promise<void> {}
