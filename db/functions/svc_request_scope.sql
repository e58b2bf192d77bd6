-- A tenant transaction's first statement (db/tenant.ts): binds app.tenant_id, refuses a revoked access token and,
-- for a user's token, a tenant or user that is not ACTIVE. A PL/pgSQL function so its queries are planned once per
-- server session even behind a pooler with no prepared statements. SECURITY INVOKER: runs as svc_app, under RLS.
create or replace function svc_request_scope(p_tenant_id bigint, p_access_jti uuid, p_user_id bigint) returns void
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
$$;
grant execute on function svc_request_scope(bigint, uuid, bigint) to svc_app;
