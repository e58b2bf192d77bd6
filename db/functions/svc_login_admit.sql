-- A login's admission in one call (db/repos/login-admission.ts): counts the attempt before its password is checked
-- and finds the tenant it names (tenants and owner_directory have no RLS). The upsert and the lock read are one
-- statement, so a lock set meanwhile by another attempt reads as "busy", never as "admitted". SECURITY INVOKER:
-- runs as svc_app, under RLS.
create or replace function svc_login_admit(
  attempt_scope varchar,
  attempt_login_id varchar,
  max_failures integer,
  lock_seconds integer,
  entry_custom_id varchar,
  entry_owner_login_id varchar,
  out admitted boolean,
  out locked_until timestamptz,
  out tenant_id bigint,
  out tenant_slug varchar,
  out tenant_custom_id varchar,
  out tenant_custom_domain varchar,
  out tenant_name varchar,
  out tenant_status varchar,
  out tenant_onboarding_completed_at timestamptz,
  out owner_user_id bigint
)
language plpgsql security invoker as $$
#variable_conflict use_column
begin
  -- The count starts afresh once a lock has ended, or once it has stalled for a lock period (attempts that
  -- never finished, e.g. an instance that died mid-check). The row lock taken by the upsert serialises attempts.
  with attempt as (
    insert into login_failures as f (scope, login_id, failures, locked_until, updated_at)
    values (attempt_scope, attempt_login_id, 1, null, now())
    on conflict (scope, login_id) do update set
      failures = case when f.locked_until is null and f.failures < max_failures then f.failures + 1 else 1 end,
      locked_until = null,
      updated_at = now()
    where (f.locked_until is null and f.failures < max_failures)
       or f.locked_until <= now()
       or (f.locked_until is null and f.updated_at < now() - make_interval(secs => lock_seconds))
    returning 1
  )
  select exists (select 1 from attempt),
         (select l.locked_until from login_failures l where l.scope = attempt_scope and l.login_id = attempt_login_id)
    into admitted, locked_until;

  if entry_custom_id is not null then
    select t.id, t.slug, t.custom_id, t.custom_domain, t.name, t.status, t.onboarding_completed_at, null
      into tenant_id, tenant_slug, tenant_custom_id, tenant_custom_domain, tenant_name, tenant_status,
           tenant_onboarding_completed_at, owner_user_id
      from tenants t where t.custom_id = entry_custom_id;
  else
    select t.id, t.slug, t.custom_id, t.custom_domain, t.name, t.status, t.onboarding_completed_at, o.user_id
      into tenant_id, tenant_slug, tenant_custom_id, tenant_custom_domain, tenant_name, tenant_status,
           tenant_onboarding_completed_at, owner_user_id
      from owner_directory o join tenants t on t.id = o.tenant_id where o.user_login_id = entry_owner_login_id;
  end if;
end
$$;
revoke all on function svc_login_admit(varchar, varchar, integer, integer, varchar, varchar) from public;
grant execute on function svc_login_admit(varchar, varchar, integer, integer, varchar, varchar) to svc_app;
