-- Statement-level trigger of sms_messages: journals what the statement's messages add to the usage report, one row
-- per (tenant, 15-minute UTC bucket of created_at) into sms_usage_changes (db/repos/audit/sms-usage.ts). Only an insert:
-- a send never locks a shared counter row, so concurrent sends, dispatch and delivery reports never wait on each
-- other here; the minute roll-up (svc_roll_up_sms_usage) folds the rows into sms_usage. A message stored CANCELLED
-- counts nothing. A recipient left out as opted out counts in recipients and opted_out, never in segments or cost.
create or replace function svc_usage_of_inserted_sms() returns trigger language plpgsql as $$
begin
  insert into sms_usage_changes (tenant_id, bucket, messages, recipients, sms, lms, segments, estimated_cost,
                                 delivered, failed, opted_out, verification_codes)
  select tenant_id, date_bin('15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'),
         count(*), sum(recipient_count), count(*) filter (where message_type = 'SMS'),
         count(*) filter (where message_type = 'LMS'), sum(estimated_segments), sum(total_price), sum(success_count),
         sum(fail_count), sum(opted_out_count), count(*) filter (where kind = 'VERIFICATION_CODE')
  from inserted
  where status <> 'CANCELLED'
  group by 1, 2;
  return null;
end
$$;
