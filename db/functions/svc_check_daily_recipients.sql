-- The previous release's signature, counting the UTC day: kept for one release so that instances of that release
-- still sending during a rolling upgrade find it (db/functions/README.md). The service calls svc_check_daily_quota; remove this
-- file in the release after the one that added SVC_TIME_ZONE.
-- Refuses a send early (SV020, as svc_reserve_daily_recipients) when its recipients no longer fit into its
-- tenant's count for the current UTC day, before the send writes any row. It reads without locking: the
-- reservation at commit decides; this only spares a send that cannot fit the work of writing itself.
create or replace function svc_check_daily_recipients(p_tenant_id bigint, p_count integer, p_limit integer) returns void
language plpgsql stable security invoker as $$
begin
  if p_limit > 0 and p_count + coalesce(
    (select u.recipients from sms_daily_usage u where u.tenant_id = p_tenant_id and u.day = (now() at time zone 'UTC')::date),
    0
  ) > p_limit then
    raise exception 'daily recipient quota exceeded' using errcode = 'SV020';
  end if;
end
$$;
grant execute on function svc_check_daily_recipients(bigint, integer, integer) to svc_app;
