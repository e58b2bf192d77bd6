import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// The request scope was one SQL statement with four subqueries. Behind a transaction pooler the service sends no
// named statements, so PostgreSQL parsed and planned that statement on every request; in a PL/pgSQL function its
// queries are planned once per server session and the statement the service sends is a plain function call.
// SECURITY INVOKER: the tenant and user lookups run as the caller (svc_app), under RLS, after the tenant is bound.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function svc_request_scope(p_tenant_id bigint, p_access_jti uuid, p_user_id bigint) returns void
    language plpgsql volatile security invoker as $$
    declare
      found_status varchar;
    begin
      perform set_config('app.tenant_id', p_tenant_id::text, true);
      if exists (select 1 from revoked_access_tokens where jti = p_access_jti) then
        perform svc_refuse_revoked_access_token();
      end if;
      -- Signed internal calls have a tenant but no user: only the tenant is bound.
      if p_user_id is null then
        return;
      end if;
      select t.status into found_status from tenants t where t.id = p_tenant_id;
      if found_status is distinct from 'ACTIVE' then
        perform svc_refuse_inactive_tenant(found_status);
      end if;
      found_status := null;
      select u.status into found_status from users u where u.tenant_id = p_tenant_id and u.id = p_user_id;
      if found_status is distinct from 'ACTIVE' then
        perform svc_refuse_inactive_user(found_status);
      end if;
    end
    $$`.execute(db)
  await sql`grant execute on function svc_request_scope(bigint, uuid, bigint) to svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function svc_request_scope(bigint, uuid, bigint)`.execute(db)
}
