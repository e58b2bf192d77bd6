import type { Kysely } from 'kysely'

// A suspended user or tenant kept its access tokens until they expired. The request scope statement now also reads
// the tenant's and the user's status (two primary-key lookups in the same statement, no round trip of its own) and
// raises, like the revocation check, when either is not ACTIVE. A token naming a tenant or user that does not exist
// (in that tenant) is not a valid token: SV003. Called only from CASE branches, so the common path stays plain SQL;
// VOLATILE so they are never evaluated early.
// svc_refuse_inactive_tenant and svc_refuse_inactive_user live in db/functions and are applied after the migrations
// (db/function-files.ts); this migration stays listed because databases record that it ran.
export async function up(_db: Kysely<any>): Promise<void> {}
