import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// A suspended user or tenant kept its access tokens until they expired. The request scope statement now also reads
// the tenant's and the user's status (two primary-key lookups in the same statement, no round trip of its own) and
// raises, like the revocation check, when either is not ACTIVE. A token naming a tenant or user that does not exist
// (in that tenant) is not a valid token: SV003. Called only from CASE branches, so the common path stays plain SQL;
// VOLATILE so they are never evaluated early.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function svc_refuse_inactive_tenant(tenant_status varchar) returns boolean
    language plpgsql volatile security invoker as $$
    begin
      if tenant_status is null then
        raise exception 'unknown tenant' using errcode = 'SV003';
      end if;
      raise exception 'tenant not active' using errcode = 'SV010';
    end
    $$`.execute(db)
  await sql`
    create function svc_refuse_inactive_user(user_status varchar) returns boolean
    language plpgsql volatile security invoker as $$
    begin
      if user_status is null then
        raise exception 'unknown user' using errcode = 'SV003';
      end if;
      raise exception 'user not active' using errcode = 'SV015';
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function svc_refuse_inactive_user(varchar)`.execute(db)
  await sql`drop function svc_refuse_inactive_tenant(varchar)`.execute(db)
}
