-- Counts a send's recipients against its tenant's counter for the current local day (p_time_zone, SVC_TIME_ZONE;
-- db/repos/sms/sms-quota.ts), or raises SV020 when that would pass the tenant's limit (its own quota, else
-- p_default_limit; 0: no limit), changing nothing; the refusal's DETAIL is the whole seconds until the next local
-- midnight. One conditional upsert: a concurrent send of the same tenant waits for this row's lock and then sees the
-- new total, so two sends never both fit into the last free places. The send's last statement, written with its
-- commit, so the row stays locked only while the commit runs; the raise aborts the transaction, so a refused send
-- leaves nothing behind. SECURITY INVOKER: runs as svc_app, under RLS.
create or replace function svc_reserve_daily_quota(p_tenant_id bigint, p_count integer, p_default_limit integer, p_time_zone text) returns void
language plpgsql volatile security invoker as $$
declare
  v_limit integer := svc_daily_quota_limit(p_tenant_id, p_default_limit);
begin
  if v_limit > 0 and p_count > v_limit then
    raise exception 'daily recipient quota exceeded' using errcode = 'SV020', detail = svc_seconds_to_local_midnight(p_time_zone);
  end if;
  insert into sms_daily_usage as u (tenant_id, day, recipients)
  values (p_tenant_id, (now() at time zone p_time_zone)::date, p_count)
  on conflict (tenant_id, day) do update
    set recipients = u.recipients + excluded.recipients, updated_at = now()
    where v_limit = 0 or u.recipients + excluded.recipients <= v_limit;
  if not found then
    raise exception 'daily recipient quota exceeded' using errcode = 'SV020', detail = svc_seconds_to_local_midnight(p_time_zone);
  end if;
end
$$;
grant execute on function svc_reserve_daily_quota(bigint, integer, integer, text) to svc_app;
