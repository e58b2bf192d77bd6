import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// A request's first statement used to answer "revoked: true/false" and the service waited for that answer before
// sending anything else: one round trip of its own on every authenticated request. Raising instead lets the
// statement travel in one write with the request's first real statement: when the token is revoked the
// transaction is aborted before that statement runs, so nothing the request asks of the database takes effect.
// Called only from a CASE branch, so the common path stays plain SQL; VOLATILE so it is never evaluated early.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function svc_refuse_revoked_access_token() returns boolean
    language plpgsql volatile security invoker as $$
    begin
      raise exception 'access token revoked' using errcode = 'SV004';
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function svc_refuse_revoked_access_token()`.execute(db)
}
