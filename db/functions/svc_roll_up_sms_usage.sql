-- The minute roll-up (plugins/platform/maintenance.ts), for the local days of p_time_zone (SVC_TIME_ZONE): moves at most
-- p_batch pending deltas of sms_usage_changes into the per-bucket totals of sms_usage and the per-day totals of
-- sms_usage_days; answers the number of deltas moved, and the caller repeats while that is p_batch. Bounded, so a
-- backlog (the job stopped for hours, history imported in bulk) drains a batch at a time within the statement time
-- limit instead of failing whole every minute while the journal only grows. When the days are of another zone (or none yet), it first
-- rebuilds them for p_time_zone from the buckets, which every zone's days can be summed from exactly.
-- All of it is one transaction, so a report (which reads the days or the buckets, and the journal, in one snapshot)
-- never sees a delta twice or not at all, nor days of a half-built zone.
-- Roll-ups take turns on an advisory lock: a rebuild must see every bucket another roll-up adds, and instances
-- that disagree on the zone must not interleave rebuilds. A waiting roll-up goes on once the other committed and,
-- at READ COMMITTED (as the minute job calls it), each statement here sees that commit: the deltas already gone,
-- the days already built.
-- SECURITY DEFINER: the runtime role sees one tenant at a time under RLS, and may write none of these tables.
create or replace function svc_roll_up_sms_usage(p_time_zone text, p_batch integer) returns integer
language plpgsql security definer set search_path = public, pg_temp as $$
declare
  -- The figures of usage, summed alike from the deltas into the buckets and the days: a new one is its column in
  -- sms_usage_changes, sms_usage and sms_usage_days (the triggers' functions fill it), and its name here.
  measures constant text[] := array['messages', 'recipients', 'sms', 'lms', 'segments', 'estimated_cost', 'delivered',
                                    'failed', 'opted_out', 'verification_codes', 'alimtalk', 'fallbacks',
                                    'no_consent', 'consent_notices'];
  listed text;
  summed text;
  added text;
  moved integer;
begin
  -- The column list, its sums, and an upsert's update of its target (alias t): each figure plus the one it brings.
  select string_agg(format('%I', m), ', ' order by at), string_agg(format('sum(%I)', m), ', ' order by at),
         string_agg(format('%1$I = t.%1$I + excluded.%1$I', m), ', ' order by at)
    into listed, summed, added
    from unnest(measures) with ordinality as u(m, at);

  perform pg_advisory_xact_lock(hashtextextended('svc_roll_up_sms_usage', 0));

  if not exists (select 1 from sms_usage_zones where time_zone = p_time_zone) then
    -- A zone change (or the first roll-up): one aggregation over the buckets. Until this commits, reports of
    -- p_time_zone read the buckets, which are exact in any zone.
    delete from sms_usage_days;
    delete from sms_usage_zones;
    execute format($q$
      insert into sms_usage_days (tenant_id, time_zone, day, %1$s)
      select tenant_id, $1, (bucket at time zone $1)::date, %2$s
      from sms_usage
      group by 1, 3
      $q$, listed, summed) using p_time_zone;
    insert into sms_usage_zones (time_zone) values (p_time_zone);
  end if;

  -- $1 is p_time_zone, $2 p_batch.
  execute format($q$
    with batch as (
      -- Any p_batch of them: a report reads the journal and the totals in one snapshot, so it sees each delta once
      -- whichever move it is in.
      select tenant_id, id from sms_usage_changes limit greatest($2, 1)
    ), moved as (
      delete from sms_usage_changes c using batch where c.tenant_id = batch.tenant_id and c.id = batch.id
      returning c.*
    ), buckets as (
      insert into sms_usage as t (tenant_id, bucket, %1$s)
      select tenant_id, bucket, %2$s
      from moved
      group by tenant_id, bucket
      on conflict (tenant_id, bucket) do update set %3$s
    ), days as (
      insert into sms_usage_days as t (tenant_id, time_zone, day, %1$s)
      select tenant_id, $1, (bucket at time zone $1)::date, %2$s
      from moved
      group by 1, 3
      on conflict (tenant_id, time_zone, day) do update set %3$s
    )
    select count(*)::integer from moved
    $q$, listed, summed, added) into moved using p_time_zone, p_batch;
  return moved;
end
$$;
revoke all on function svc_roll_up_sms_usage(text, integer) from public;
grant execute on function svc_roll_up_sms_usage(text, integer) to svc_app;
