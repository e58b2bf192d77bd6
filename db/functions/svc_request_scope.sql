-- A tenant transaction's first statement (db/tenant-transaction.ts): binds app.tenant_id, refuses a revoked access token and,
-- for a user's token, a tenant or user that is not ACTIVE. A PL/pgSQL function so its queries are planned once per
-- server session even behind a pooler with no prepared statements. SECURITY INVOKER: runs as svc_app, under RLS.
-- A refusal raises (SQLSTATEs read by db/errors.ts), so the transaction is aborted before the request's first real
-- statement, which travels in the same write, can run.
create or replace function svc_request_scope(p_tenant_id bigint, p_access_jti uuid, p_user_id bigint) returns void
language plpgsql volatile security invoker as $$
declare
  found_status varchar;
begin
  perform set_config('app.tenant_id', p_tenant_id::text, true);
  if exists (select 1 from revoked_access_tokens where jti = p_access_jti) then
    raise exception 'access token revoked' using errcode = 'SV004';
  end if;
  -- Signed internal calls have a tenant but no user: only the tenant is bound.
  if p_user_id is null then
    return;
  end if;
  -- A token naming a tenant or user that does not exist (in that tenant) is not a valid token: SV003.
  select t.status into found_status from tenants t where t.id = p_tenant_id;
  if found_status is null then
    raise exception 'unknown tenant' using errcode = 'SV003';
  elsif found_status <> 'ACTIVE' then
    raise exception 'tenant not active' using errcode = 'SV010';
  end if;
  found_status := null;
  select u.status into found_status from users u where u.tenant_id = p_tenant_id and u.id = p_user_id;
  if found_status is null then
    raise exception 'unknown user' using errcode = 'SV003';
  elsif found_status <> 'ACTIVE' then
    raise exception 'user not active' using errcode = 'SV015';
  end if;
end
$$;
grant execute on function svc_request_scope(bigint, uuid, bigint) to svc_app;
