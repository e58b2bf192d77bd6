-- SMS retention, row by row (plugins/sms-retention.ts): removes at most p_batch messages accepted more than p_days
-- days ago (0 keeps all) with their recipients; the caller repeats while it returns p_batch. Whole months past
-- retention are dropped as partitions instead (svc_sms_ranges_past_retention); this takes what is left: the oldest
-- month still kept, a database whose owner connection cannot drop partitions, the rows of the legacy partition.
-- Rows another transaction holds (a dispatch claim) are skipped, never waited for. The delete trigger keeps the
-- history totals exact; usage totals are kept apart and do not change. SECURITY DEFINER: the runtime role sees one
-- tenant at a time under RLS; this removes by age only and answers a count.
create or replace function svc_purge_old_sms(p_days integer, p_batch integer) returns integer
language plpgsql security definer set search_path = public as $$
declare
  cutoff timestamptz := now() - make_interval(days => greatest(p_days, 0));
  below bigint;
  n integer;
begin
  if p_days <= 0 then
    return 0;
  end if;
  -- Ranges opened after the cutoff hold no row old enough: leave them out of the plan (partition pruning).
  select coalesce(min(first_id), 9223372036854775807) into below from sms_id_ranges where opened_at > cutoff;
  with old as (
    select tenant_id, id from sms_messages
    where created_at < cutoff and id < below
    limit p_batch
    for update skip locked
  ), gone as (
    delete from sms_recipients r using old where r.tenant_id = old.tenant_id and r.sms_id = old.id
  )
  delete from sms_messages m using old where m.tenant_id = old.tenant_id and m.id = old.id;
  get diagnostics n = row_count;
  return n;
end
$$;
revoke all on function svc_purge_old_sms(integer, integer) from public;
grant execute on function svc_purge_old_sms(integer, integer) to svc_app;
