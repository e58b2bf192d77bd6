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
  moved integer;
begin
  perform pg_advisory_xact_lock(hashtextextended('svc_roll_up_sms_usage', 0));

  if not exists (select 1 from sms_usage_zones where time_zone = p_time_zone) then
    -- A zone change (or the first roll-up): one aggregation over the buckets. Until this commits, reports of
    -- p_time_zone read the buckets, which are exact in any zone.
    delete from sms_usage_days;
    delete from sms_usage_zones;
    insert into sms_usage_days (tenant_id, time_zone, day, messages, recipients, sms, lms, segments, estimated_cost,
                                delivered, failed, opted_out, verification_codes)
    select tenant_id, p_time_zone, (bucket at time zone p_time_zone)::date, sum(messages), sum(recipients), sum(sms),
           sum(lms), sum(segments), sum(estimated_cost), sum(delivered), sum(failed), sum(opted_out),
           sum(verification_codes)
    from sms_usage
    group by 1, 3;
    insert into sms_usage_zones (time_zone) values (p_time_zone);
  end if;

  with batch as (
    -- Any p_batch of them: a report reads the journal and the totals in one snapshot, so it sees each delta once
    -- whichever move it is in.
    select tenant_id, id from sms_usage_changes limit greatest(p_batch, 1)
  ), moved as (
    delete from sms_usage_changes c using batch where c.tenant_id = batch.tenant_id and c.id = batch.id
    returning c.tenant_id, c.bucket, c.messages, c.recipients, c.sms, c.lms, c.segments, c.estimated_cost, c.delivered,
              c.failed, c.opted_out, c.verification_codes
  ), buckets as (
    insert into sms_usage as u (tenant_id, bucket, messages, recipients, sms, lms, segments, estimated_cost,
                                delivered, failed, opted_out, verification_codes)
    select tenant_id, bucket, sum(messages), sum(recipients), sum(sms), sum(lms), sum(segments), sum(estimated_cost),
           sum(delivered), sum(failed), sum(opted_out), sum(verification_codes)
    from moved
    group by tenant_id, bucket
    on conflict (tenant_id, bucket) do update set
      messages = u.messages + excluded.messages,
      recipients = u.recipients + excluded.recipients,
      sms = u.sms + excluded.sms,
      lms = u.lms + excluded.lms,
      segments = u.segments + excluded.segments,
      estimated_cost = u.estimated_cost + excluded.estimated_cost,
      delivered = u.delivered + excluded.delivered,
      failed = u.failed + excluded.failed,
      opted_out = u.opted_out + excluded.opted_out,
      verification_codes = u.verification_codes + excluded.verification_codes
  ), days as (
    insert into sms_usage_days as d (tenant_id, time_zone, day, messages, recipients, sms, lms, segments,
                                     estimated_cost, delivered, failed, opted_out, verification_codes)
    select tenant_id, p_time_zone, (bucket at time zone p_time_zone)::date, sum(messages), sum(recipients), sum(sms),
           sum(lms), sum(segments), sum(estimated_cost), sum(delivered), sum(failed), sum(opted_out),
           sum(verification_codes)
    from moved
    group by 1, 3
    on conflict (tenant_id, time_zone, day) do update set
      messages = d.messages + excluded.messages,
      recipients = d.recipients + excluded.recipients,
      sms = d.sms + excluded.sms,
      lms = d.lms + excluded.lms,
      segments = d.segments + excluded.segments,
      estimated_cost = d.estimated_cost + excluded.estimated_cost,
      delivered = d.delivered + excluded.delivered,
      failed = d.failed + excluded.failed,
      opted_out = d.opted_out + excluded.opted_out,
      verification_codes = d.verification_codes + excluded.verification_codes
  )
  select count(*)::integer into moved from moved;
  return moved;
end
$$;
revoke all on function svc_roll_up_sms_usage(text, integer) from public;
grant execute on function svc_roll_up_sms_usage(text, integer) to svc_app;
