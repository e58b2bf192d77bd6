-- GET /v1/me's read (db/repos/tenancy/users.ts): the caller's user row, phone verification included, and its tenant. A
-- PL/pgSQL function so PostgreSQL plans the join once per server session even when no statement is prepared (behind
-- a transaction pooler, where planning it on every request cost more than the rest of the request). SECURITY
-- INVOKER: runs as svc_app, so the users row is under RLS (the tenant bound by svc_request_scope); tenants has no RLS.
-- It succeeds svc_current_user under a new name because its columns differ: an instance of the previous release
-- keeps its prepared `select * from svc_current_user(...)`, which PostgreSQL would refuse on every run ("cached plan
-- must not change result type") if that function's columns changed under it during a rolling upgrade.
create or replace function svc_signed_in_user(p_user_id bigint)
returns table (
  id bigint, tenant_id bigint, user_login_id varchar, name varchar, phone varchar, phone_verified_at timestamptz,
  role varchar, status varchar, avatar_seed varchar, tenant_slug varchar, tenant_custom_id varchar,
  tenant_custom_domain varchar, tenant_name varchar, tenant_status varchar, tenant_onboarding_completed_at timestamptz
)
language plpgsql stable security invoker as $$
#variable_conflict use_column
begin
  return query
    select u.id, u.tenant_id, u.user_login_id, u.name, u.phone, u.phone_verified_at, u.role, u.status, u.avatar_seed,
           t.slug, t.custom_id, t.custom_domain, t.name, t.status, t.onboarding_completed_at
    from users u join tenants t on t.id = u.tenant_id
    where u.id = p_user_id;
end
$$;
grant execute on function svc_signed_in_user(bigint) to svc_app;
