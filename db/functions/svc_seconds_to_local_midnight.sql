-- Whole seconds (at least 1) from the transaction's now() to the next midnight in p_time_zone, daylight saving
-- included: when the daily recipient quota starts again (the Retry-After of SMS_QUOTA_EXCEEDED).
create or replace function svc_seconds_to_local_midnight(p_time_zone text) returns integer
language sql stable security invoker as $$
  select greatest(1, ceil(extract(epoch from
    ((date_trunc('day', now() at time zone p_time_zone) + interval '1 day') at time zone p_time_zone) - now()
  ))::integer)
$$;
grant execute on function svc_seconds_to_local_midnight(text) to svc_app;
