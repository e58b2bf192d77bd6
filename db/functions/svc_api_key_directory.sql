-- The tenant and id of the API key with this lookup id, before any tenant is known (plugins/sign-in/auth.ts through
-- lib/api-keys/key-resolver.ts): ids only, never the key's hash, scopes or creator, which are read afterwards in
-- that tenant's transaction under RLS. SECURITY DEFINER: the runtime role cannot read api_key_directory itself.
create or replace function svc_api_key_directory(p_lookup_id text) returns table (tenant_id bigint, api_key_id bigint)
language sql stable security definer set search_path = public, pg_temp as $$
  select d.tenant_id, d.api_key_id from api_key_directory d where d.lookup_id = p_lookup_id
$$;
revoke all on function svc_api_key_directory(text) from public;
grant execute on function svc_api_key_directory(text) to svc_app;
