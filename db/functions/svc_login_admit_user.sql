-- Counts one attempt to prove a known user's password (a login of either entry, a password change's current
-- password) before it is checked, in the tenant transaction or statement that bound the user's tenant: one counter
-- per user (user_login_failures, RLS), counted by the lockout rule (svc_login_count_attempt). SECURITY INVOKER: runs
-- as svc_app, under RLS.
create or replace function svc_login_admit_user(
  attempt_tenant_id bigint,
  attempt_user_id bigint,
  max_failures integer,
  lock_seconds integer,
  out admitted boolean,
  out locked_until timestamptz
)
language plpgsql security invoker as $$
begin
  select a.admitted, a.locked_until into admitted, locked_until
    from svc_login_count_attempt('user_login_failures', 'tenant_id', attempt_tenant_id, 'user_id', attempt_user_id,
                                 max_failures, lock_seconds) a;
end
$$;
revoke all on function svc_login_admit_user(bigint, bigint, integer, integer) from public;
grant execute on function svc_login_admit_user(bigint, bigint, integer, integer) to svc_app;
