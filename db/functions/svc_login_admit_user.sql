-- Counts one attempt to prove a known user's password (a login of either entry, a password change's current
-- password) before it is checked, in the tenant transaction or statement that bound the user's tenant: one counter
-- per user (user_login_failures, RLS). The upsert and the lock read are one statement, so a lock set meanwhile by
-- another attempt reads as "busy", never as "admitted". SECURITY INVOKER: runs as svc_app, under RLS.
create or replace function svc_login_admit_user(
  attempt_tenant_id bigint,
  attempt_user_id bigint,
  max_failures integer,
  lock_seconds integer,
  out admitted boolean,
  out locked_until timestamptz
)
language plpgsql security invoker as $$
#variable_conflict use_column
begin
  -- The count starts afresh once a lock has ended, or once it has stalled for a lock period (attempts that
  -- never finished, e.g. an instance that died mid-check). The row lock taken by the upsert serialises attempts.
  with attempt as (
    insert into user_login_failures as f (tenant_id, user_id, failures, locked_until, updated_at)
    values (attempt_tenant_id, attempt_user_id, 1, null, now())
    on conflict (tenant_id, user_id) do update set
      failures = case when f.locked_until is null and f.failures < max_failures then f.failures + 1 else 1 end,
      locked_until = null,
      updated_at = now()
    where (f.locked_until is null and f.failures < max_failures)
       or f.locked_until <= now()
       or (f.locked_until is null and f.updated_at < now() - make_interval(secs => lock_seconds))
    returning 1
  )
  select exists (select 1 from attempt),
         (select l.locked_until from user_login_failures l
           where l.tenant_id = attempt_tenant_id and l.user_id = attempt_user_id)
    into admitted, locked_until;
end
$$;
revoke all on function svc_login_admit_user(bigint, bigint, integer, integer) from public;
grant execute on function svc_login_admit_user(bigint, bigint, integer, integer) to svc_app;
