import type { Kysely } from 'kysely'

// `npm run sender:pending` lists sender numbers awaiting an operator's decision across tenants. The runtime role sees
// one tenant at a time under RLS; rather than hand the shell the owner's credentials (which can alter the schema and
// switch RLS off), this function answers exactly what scripts/approve-sender.sh needs and nothing else: slug, tenant
// name, number and when it was requested, for PENDING rows only.
// svc_pending_sender_numbers lives in db/functions and is applied after the migrations (db/function-files.ts); this
// migration stays listed because databases record that it ran.
export async function up(_db: Kysely<any>): Promise<void> {}
