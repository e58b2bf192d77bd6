-- The first statement of a tenant transaction opened for an API key (db/tenant-transaction.ts), instead of
-- svc_request_scope: binds app.tenant_id, then refuses a suspended tenant (SV010) and a key that is unknown in this
-- tenant, revoked, expired, not the creator's, or whose creator is no longer ACTIVE or no longer OWNER or MANAGER
-- (SV003). Checked on every request, so a revocation on any instance counts on the next request everywhere.
-- SECURITY INVOKER: runs as svc_app, under RLS.
create or replace function svc_api_key_scope(p_tenant_id bigint, p_api_key_id bigint, p_user_id bigint) returns void
language plpgsql volatile security invoker as $$
declare
  found_status varchar;
begin
  perform set_config('app.tenant_id', p_tenant_id::text, true);
  select t.status into found_status from tenants t where t.id = p_tenant_id;
  if found_status is null then
    raise exception 'unknown tenant' using errcode = 'SV003';
  elsif found_status <> 'ACTIVE' then
    raise exception 'tenant not active' using errcode = 'SV010';
  end if;
  if not exists (
    select 1 from api_keys k join users u on u.tenant_id = k.tenant_id and u.id = k.created_by
    where k.tenant_id = p_tenant_id and k.id = p_api_key_id and k.created_by = p_user_id
      and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
      and u.status = 'ACTIVE' and u.role in ('OWNER', 'MANAGER')
  ) then
    raise exception 'api key refused' using errcode = 'SV003';
  end if;
end
$$;
grant execute on function svc_api_key_scope(bigint, bigint, bigint) to svc_app;
