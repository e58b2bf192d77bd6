-- The start (lib/data-keys/check.ts) and `npm run data-keys:reseal`: how many sealed values each data key holds,
-- across tenants, so that a start whose key ring lacks one is refused before it serves anybody; and, per kind and key,
-- the owners of two of them (the least and the greatest), whose values the start then opens in their tenant's
-- transaction to prove the ring's key for that kid is the one that sealed them. Counts and ids only: no value.
-- key_id is the kid a value names (`v2.<kid>.`), null for what the legacy key sealed before key ids (`v1.`) and for a
-- set of recovery codes without a key of its own (hashed under that legacy key). SECURITY DEFINER: the runtime role
-- sees one tenant at a time under RLS.
create or replace function svc_sealed_key_ids()
returns table (kind text, key_id text, sealed bigint,
  first_tenant_id bigint, first_user_id bigint, last_tenant_id bigint, last_user_id bigint)
language sql stable security definer set search_path = public, pg_temp as $$
  with sealed_values (kind, value, owner) as (
    select 'totp_secret', totp_secret, array[tenant_id, user_id] from user_second_factors where totp_secret is not null
    union all
    select 'pending_totp_secret', totp_pending_secret, array[tenant_id, user_id]
    from user_second_factors where totp_pending_secret is not null
    union all
    select 'recovery_code_key', f.recovery_key_sealed, array[f.tenant_id, f.user_id] from user_second_factors f
    where f.recovery_key_sealed is not null
      or exists (select 1 from user_recovery_codes r where r.tenant_id = f.tenant_id and r.user_id = f.user_id)
    union all
    select 'webhook_secret', secret_sealed, array[tenant_id, null] from webhook_endpoints
  )
  select kind, key_id, count(*), (min(owner))[1], (min(owner))[2], (max(owner))[1], (max(owner))[2]
  from (select kind, case when starts_with(value, 'v2.') then split_part(value, '.', 2) end as key_id, owner
        from sealed_values) keyed
  group by kind, key_id
  order by kind, key_id
$$;
revoke all on function svc_sealed_key_ids() from public;
grant execute on function svc_sealed_key_ids() to svc_app;
