-- Refuses a send early (SV020, as svc_reserve_daily_quota) when its recipients no longer fit into its tenant's
-- count for the current local day (p_time_zone, SVC_TIME_ZONE), before the send writes any row. The limit is the
-- tenant's own quota, else p_default_limit (svc_daily_quota_limit). It reads without locking: the reservation at
-- commit decides; this only spares a send that cannot fit the work of writing itself. The refusal's DETAIL is the
-- whole seconds until the next local midnight (the answer's Retry-After).
create or replace function svc_check_daily_quota(p_tenant_id bigint, p_count integer, p_default_limit integer, p_time_zone text) returns void
language plpgsql stable security invoker as $$
declare
  v_limit integer := svc_daily_quota_limit(p_tenant_id, p_default_limit);
begin
  if v_limit > 0 and p_count + coalesce(
    (select u.recipients from sms_daily_usage u where u.tenant_id = p_tenant_id and u.day = (now() at time zone p_time_zone)::date),
    0
  ) > v_limit then
    raise exception 'daily recipient quota exceeded' using errcode = 'SV020', detail = svc_seconds_to_local_midnight(p_time_zone);
  end if;
end
$$;
grant execute on function svc_check_daily_quota(bigint, integer, integer, text) to svc_app;
