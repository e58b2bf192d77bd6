-- The first message id of a month's range of ids (sms_messages and sms_recipients are partitioned by it,
-- docs/architecture.md#data-lifecycle): yyyymm x 10^10, so an id names the month its range was opened for
-- (2026120000000001) and stays below 2^53, exact as a JSON number, until the year 9007.
create or replace function svc_sms_range_start(p_month date) returns bigint
language sql immutable as $$
  select (extract(year from p_month)::bigint * 100 + extract(month from p_month)::bigint) * 10000000000
$$;
