-- SMS retention, row by row (plugins/sms/sms-retention.ts): removes at most p_batch messages (never more than 10,000)
-- accepted more than the owner's retention_settings.sms_days ago (0 keeps all) with their recipients; the caller
-- repeats while it returns p_batch. Whole months past retention are dropped as partitions instead
-- (svc_sms_ranges_past_retention); this takes what is left: the oldest month still kept, a database whose owner
-- connection cannot drop partitions, the rows of the legacy partition. Rows another transaction holds (a dispatch
-- claim) are skipped, never waited for. The delete trigger keeps the history totals exact; usage totals are kept
-- apart and do not change. SECURITY DEFINER: the runtime role sees one tenant at a time under RLS; this removes by
-- age only and answers a count. The age is the owner's setting, never an argument the runtime role could choose;
-- pg_temp comes last in the search path, so no temporary table of the caller's can stand in for the setting.
create or replace function svc_purge_old_sms(p_batch integer) returns integer
language plpgsql security definer set search_path = public, pg_temp as $$
declare
  kept_days integer;
  cutoff timestamptz;
  below bigint;
  n integer;
begin
  select sms_days into kept_days from retention_settings;
  if coalesce(kept_days, 0) <= 0 then
    return 0;
  end if;
  cutoff := now() - make_interval(days => kept_days);
  -- Ranges opened after the cutoff hold no row old enough: leave them out of the plan (partition pruning).
  select coalesce(min(first_id), 9223372036854775807) into below from sms_id_ranges where opened_at > cutoff;
  with old as (
    select tenant_id, id from sms_messages
    where created_at < cutoff and id < below
    limit least(greatest(p_batch, 0), 10000)
    for update skip locked
  ), gone as (
    delete from sms_recipients r using old where r.tenant_id = old.tenant_id and r.sms_id = old.id
  )
  delete from sms_messages m using old where m.tenant_id = old.tenant_id and m.id = old.id;
  get diagnostics n = row_count;
  return n;
end
$$;
revoke all on function svc_purge_old_sms(integer) from public;
grant execute on function svc_purge_old_sms(integer) to svc_app;
