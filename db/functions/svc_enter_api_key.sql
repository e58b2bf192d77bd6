-- Row trigger of api_keys (after insert): enters the new key's lookup id in api_key_directory, which has no RLS and
-- which the runtime role may neither read nor write. SECURITY DEFINER, confined to the row just inserted, which
-- RLS has already confined to the inserting transaction's tenant. A lookup id taken by another key fails here on
-- the directory's primary key, in the inserting statement.
create or replace function svc_enter_api_key() returns trigger
language plpgsql security definer set search_path = public, pg_temp as $$
begin
  insert into api_key_directory (lookup_id, tenant_id, api_key_id) values (new.lookup_id, new.tenant_id, new.id);
  return null;
end
$$;
revoke all on function svc_enter_api_key() from public;
