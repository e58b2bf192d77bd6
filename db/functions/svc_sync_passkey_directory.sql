-- Row trigger of passkeys (after insert, after delete): keeps passkey_directory, the credential id -> (tenant, user)
-- map a passkey sign-in reads before any tenant is known, in step with the passkeys rows, in the same transaction.
-- passkey_directory has no RLS, so the runtime role may not write it at all; this SECURITY DEFINER trigger writes
-- only the entry of the passkeys row just added or removed, which the runtime could reach only through RLS (its own
-- tenant). A credential id another user already holds fails here on the directory's primary key, in the insert.
create or replace function svc_sync_passkey_directory() returns trigger
language plpgsql security definer set search_path = public, pg_temp as $$
begin
  if tg_op = 'INSERT' then
    insert into passkey_directory (credential_id, tenant_id, user_id) values (new.credential_id, new.tenant_id, new.user_id);
  else
    delete from passkey_directory where credential_id = old.credential_id and tenant_id = old.tenant_id;
  end if;
  return null;
end
$$;
revoke all on function svc_sync_passkey_directory() from public;
