-- Audit retention (plugins/maintenance.ts): removes events older than p_days (0 keeps all), at most p_batch of them
-- per call, oldest first, so one call never holds its locks long; the caller repeats while it returns p_batch.
-- SECURITY DEFINER: the runtime role may not delete events (the log is append-only for it) and sees one tenant at a
-- time under RLS; this function removes by age only and answers a count.
create or replace function svc_purge_audit_events(p_days integer, p_batch integer) returns integer
language plpgsql security definer set search_path = public as $$
declare
  n integer;
begin
  if p_days <= 0 then
    return 0;
  end if;
  delete from audit_events e
  using (
    select tenant_id, id from audit_events
    where occurred_at < now() - make_interval(days => p_days)
    order by occurred_at
    limit p_batch
  ) old
  where e.tenant_id = old.tenant_id and e.id = old.id;
  get diagnostics n = row_count;
  return n;
end
$$;
revoke all on function svc_purge_audit_events(integer, integer) from public;
grant execute on function svc_purge_audit_events(integer, integer) to svc_app;
