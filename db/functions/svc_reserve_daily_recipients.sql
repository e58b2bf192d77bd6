-- The previous release's signature, counting the UTC day: kept for one release so that instances of that release
-- still sending during a rolling upgrade find it (db/functions/README.md). The service calls svc_reserve_daily_quota; remove this
-- file in the release after the one that added SVC_TIME_ZONE.
-- Counts a send's recipients against its tenant's counter for the current UTC day (db/repos/sms/sms-quota.ts), or
-- raises SV020 when that would pass p_limit (0: no limit), changing nothing. One conditional upsert: a concurrent
-- send of the same tenant waits for this row's lock and then sees the new total, so two sends never both fit into
-- the last free places. The send's last statement, written with its commit, so the row stays locked only while
-- the commit runs; the raise aborts the transaction, so a refused send leaves nothing behind. SECURITY INVOKER:
-- runs as svc_app, under RLS.
create or replace function svc_reserve_daily_recipients(p_tenant_id bigint, p_count integer, p_limit integer) returns void
language plpgsql volatile security invoker as $$
begin
  if p_limit > 0 and p_count > p_limit then
    raise exception 'daily recipient quota exceeded' using errcode = 'SV020';
  end if;
  insert into sms_daily_usage as u (tenant_id, day, recipients)
  values (p_tenant_id, (now() at time zone 'UTC')::date, p_count)
  on conflict (tenant_id, day) do update
    set recipients = u.recipients + excluded.recipients, updated_at = now()
    where p_limit = 0 or u.recipients + excluded.recipients <= p_limit;
  if not found then
    raise exception 'daily recipient quota exceeded' using errcode = 'SV020';
  end if;
end
$$;
grant execute on function svc_reserve_daily_recipients(bigint, integer, integer) to svc_app;
