-- Partition upkeep, run by the owner (plugins/sms/sms-retention.ts at start and hourly, and by every migration): creates
-- the ranges of ids of this month and p_months_ahead months ahead (UTC), then opens this month's range by moving the
-- id sequence to its start (forward only). Returns how many ranges it created. If it stops running, ids keep coming
-- from the last range opened: sends never fail for want of a partition, that range only grows. p_now is the time it
-- acts at (tests open the ranges of past months with it; the sequence never moves back).
create or replace function svc_prepare_sms_partitions(p_months_ahead integer, p_now timestamptz default now()) returns integer
language plpgsql set search_path = public as $$
declare
  this_month date := date_trunc('month', p_now at time zone 'UTC')::date;
  range_month date;
  range_start bigint;
  range_end bigint;
  suffix text;
  created integer := 0;
begin
  -- Two instances preparing at once would both create the same tables.
  perform pg_advisory_xact_lock(hashtext('svc_prepare_sms_partitions'));
  -- Attaching waits for no insert or update, but never queue behind a long DDL lock either: the next run tries again.
  perform set_config('lock_timeout', '2s', true);
  for i in 0..p_months_ahead loop
    range_month := (this_month + make_interval(months => i))::date;
    range_start := svc_sms_range_start(range_month);
    continue when exists (select 1 from sms_id_ranges r where r.first_id = range_start);
    range_end := svc_sms_range_start((range_month + interval '1 month')::date);
    suffix := 'p' || to_char(range_month, 'YYYYMM');
    -- A table of its own, attached afterwards: ATTACH takes SHARE UPDATE EXCLUSIVE on the partitioned table, so
    -- sends and dispatches go on; CREATE TABLE ... PARTITION OF would take ACCESS EXCLUSIVE.
    execute format('create table %I (like sms_messages including defaults including constraints)', 'sms_messages_' || suffix);
    execute format('alter table sms_messages attach partition %I for values from (%s) to (%s)',
      'sms_messages_' || suffix, range_start, range_end);
    perform svc_protect_tenant_table(format('%I', 'sms_messages_' || suffix)::regclass);
    execute format('create table %I (like sms_recipients including defaults including constraints)', 'sms_recipients_' || suffix);
    execute format('alter table sms_recipients attach partition %I for values from (%s) to (%s)',
      'sms_recipients_' || suffix, range_start, range_end);
    perform svc_protect_tenant_table(format('%I', 'sms_recipients_' || suffix)::regclass);
    insert into sms_id_ranges (first_id, suffix) values (range_start, suffix);
    created := created + 1;
  end loop;
  range_start := svc_sms_range_start(this_month);
  update sms_id_ranges r set opened_at = p_now where r.first_id = range_start and r.opened_at is null;
  if found and (select last_value from sms_messages_id_seq) < range_start then
    perform setval('sms_messages_id_seq', range_start, false);
  end if;
  return created;
end
$$;
revoke all on function svc_prepare_sms_partitions(integer, timestamptz) from public;
