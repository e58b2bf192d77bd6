-- Audit retention (plugins/platform/maintenance.ts): removes events older than the owner's retention_settings.audit_days (0
-- keeps all), at most p_batch of them per call (never more than 10,000), oldest first, so one call never holds its
-- locks long; the caller repeats while it returns p_batch.
-- SECURITY DEFINER: the runtime role may not delete events (the log is append-only for it) and sees one tenant at a
-- time under RLS; this function removes by age only and answers a count. The age is the owner's setting, never an
-- argument: the runtime role may call this, and a retention it chose would erase every tenant's log. pg_temp last
-- in the search path: otherwise a temporary table of the caller's named retention_settings would be read instead.
create or replace function svc_purge_audit_events(p_batch integer) returns integer
language plpgsql security definer set search_path = public, pg_temp as $$
declare
  kept_days integer;
  n integer;
begin
  select audit_days into kept_days from retention_settings;
  if coalesce(kept_days, 0) <= 0 then
    return 0;
  end if;
  delete from audit_events e
  using (
    select tenant_id, id from audit_events
    where occurred_at < now() - make_interval(days => kept_days)
    order by occurred_at
    limit least(greatest(p_batch, 0), 10000)
  ) old
  where e.tenant_id = old.tenant_id and e.id = old.id;
  get diagnostics n = row_count;
  return n;
end
$$;
revoke all on function svc_purge_audit_events(integer) from public;
grant execute on function svc_purge_audit_events(integer) to svc_app;
