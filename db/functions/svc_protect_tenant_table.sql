-- Row-level security for one tenant table: enabled, forced (the owner is subject to it too) and the tenant_isolation
-- policy on app.tenant_id. Every migration that creates a tenant table calls it, so the policy text exists once.
-- owner_maintenance lets the migrating role (the tables' owner, and so the owner of the SECURITY DEFINER maintenance
-- functions: purges, the usage roll-up) reach every tenant's rows. Forced RLS applies to an owner that is not a
-- superuser, and without this policy those functions would silently find nothing. It names that role only: svc_app,
-- which every runtime transaction switches to, stays under tenant_isolation alone.
create or replace function svc_protect_tenant_table(target regclass) returns void language plpgsql as $$
begin
  execute format('alter table %s enable row level security', target);
  execute format('alter table %s force row level security', target);
  execute format($p$create policy tenant_isolation on %s
    using (tenant_id = (select nullif(current_setting('app.tenant_id', true), '')::bigint))
    with check (tenant_id = (select nullif(current_setting('app.tenant_id', true), '')::bigint))$p$, target);
  execute format('create policy owner_maintenance on %s to %I using (true) with check (true)', target, current_user);
end
$$;
