-- Row trigger of users (after a login id change): keeps the owner's entry in owner_directory in step with the
-- users row. owner_directory has no RLS (the root entry reads it before any tenant is known), so the runtime role
-- may not update it at all; this SECURITY DEFINER trigger changes only the entry of the users row just renamed,
-- which the runtime could reach only through RLS (its own tenant), and only its login id and key. A taken id fails
-- here on owner_directory's unique keys, in the renaming statement.
create or replace function svc_sync_owner_entry() returns trigger
language plpgsql security definer set search_path = public, pg_temp as $$
begin
  update owner_directory
  set user_login_id = new.user_login_id, login_key = new.login_key, legacy_login_key_duplicate = false
  where tenant_id = new.tenant_id and user_id = new.id;
  return null;
end
$$;
revoke all on function svc_sync_owner_entry() from public;
