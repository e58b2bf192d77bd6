import type { Kysely } from 'kysely'

// A request's first statement used to answer "revoked: true/false" and the service waited for that answer before
// sending anything else: one round trip of its own on every authenticated request. Raising instead lets the
// statement travel in one write with the request's first real statement: when the token is revoked the
// transaction is aborted before that statement runs, so nothing the request asks of the database takes effect.
// Called only from a CASE branch, so the common path stays plain SQL; VOLATILE so it is never evaluated early.
// svc_refuse_revoked_access_token lives in db/functions and is applied after the migrations (db/function-files.ts);
// this migration stays listed because databases record that it ran.
export async function up(_db: Kysely<any>): Promise<void> {}
