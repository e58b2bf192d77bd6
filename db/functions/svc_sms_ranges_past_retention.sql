-- The ranges of message ids (partitions of sms_messages and sms_recipients) wholly past p_days days of retention,
-- oldest first: a later range was opened before the cutoff, and every row of a range got its id before the next
-- range was opened. Read by the owner's partition upkeep (plugins/sms/sms-retention.ts), which passes the stored
-- retention_settings.sms_days, the same the row purge applies (svc_purge_old_sms). Not for the runtime role.
create or replace function svc_sms_ranges_past_retention(p_days integer) returns setof varchar
language sql stable set search_path = public as $$
  select r.suffix from sms_id_ranges r
  where p_days > 0
    and exists (select 1 from sms_id_ranges later
                where later.first_id > r.first_id and later.opened_at <= now() - make_interval(days => p_days))
  order by r.first_id
$$;
revoke all on function svc_sms_ranges_past_retention(integer) from public;
