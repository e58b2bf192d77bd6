-- A passkey sign-in's first read (lib/passkeys/sign-in.ts): the tenant and user of a credential id, from
-- passkey_directory, before any tenant context exists. SECURITY DEFINER because the runtime role has no privilege on
-- the directory (no RLS there): it answers ids only, for one exact credential id, so nothing can be listed.
create or replace function svc_find_passkey_owner(p_credential_id text, out tenant_id bigint, out user_id bigint)
language sql stable security definer set search_path = public, pg_temp as $$
  select d.tenant_id, d.user_id from passkey_directory d where d.credential_id = p_credential_id
$$;
revoke all on function svc_find_passkey_owner(text) from public;
grant execute on function svc_find_passkey_owner(text) to svc_app;
