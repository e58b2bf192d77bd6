-- A login's admission in one call (db/repos/sign-in/login-admission.ts): finds the tenant and the user the attempt names
-- and counts the attempt before its password is checked. A known user's attempts count on the user's own counter
-- (svc_login_admit_user), whatever the entry, so root and portal entry share one limit; an attempt that names no
-- user counts on the key as presented (login_failures), which locks the same way, so a lock tells nothing about
-- whether the user exists. SECURITY INVOKER: runs as svc_app, under RLS; tenants and owner_directory have none, and
-- the user is read, and counted, with the named tenant bound for this statement's transaction only.
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
  out user_id bigint
)
language plpgsql security invoker as $$
#variable_conflict use_column
declare
  bound_tenant text := current_setting('app.tenant_id', true);
begin
  if entry_custom_id is not null then
    select t.id, t.slug, t.custom_id, t.custom_domain, t.name, t.status, t.onboarding_completed_at
      into tenant_id, tenant_slug, tenant_custom_id, tenant_custom_domain, tenant_name, tenant_status,
           tenant_onboarding_completed_at
      from tenants t where t.custom_id = entry_custom_id;
  else
    select t.id, t.slug, t.custom_id, t.custom_domain, t.name, t.status, t.onboarding_completed_at, o.user_id
      into tenant_id, tenant_slug, tenant_custom_id, tenant_custom_domain, tenant_name, tenant_status,
           tenant_onboarding_completed_at, user_id
      from owner_directory o join tenants t on t.id = o.tenant_id where o.user_login_id = entry_owner_login_id;
  end if;

  if tenant_id is not null then
    perform set_config('app.tenant_id', tenant_id::text, true);
    -- Exactly the id the login's lookup resolves (case-sensitive, unique in its tenant).
    if entry_custom_id is not null then
      select u.id into user_id from users u where u.user_login_id = attempt_login_id;
    end if;
    if user_id is not null then
      select a.admitted, a.locked_until into admitted, locked_until
        from svc_login_admit_user(tenant_id, user_id, max_failures, lock_seconds) a;
    end if;
    perform set_config('app.tenant_id', coalesce(bound_tenant, ''), true);
  end if;
  if user_id is not null then
    return;
  end if;

  -- No user: the same count, by the same rule, on the key as presented.
  select a.admitted, a.locked_until into admitted, locked_until
    from svc_login_count_attempt('login_failures', 'scope', attempt_scope, 'login_id', attempt_login_id,
                                 max_failures, lock_seconds) a;
end
$$;
revoke all on function svc_login_admit(varchar, varchar, integer, integer, varchar, varchar) from public;
grant execute on function svc_login_admit(varchar, varchar, integer, integer, varchar, varchar) to svc_app;
