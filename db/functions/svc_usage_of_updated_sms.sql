-- Row-level trigger of sms_messages, fired (WHEN) only when a message's delivery or opted-out counts or its price change or it
-- enters or leaves CANCELLED: journals the difference between what the message counts in the usage report now and
-- what it counted before, in the bucket of its acceptance (created_at, which never changes), so results that arrive later
-- land on the day the message was accepted. A cancelled message counts nothing, so cancelling takes its whole
-- contribution back and an un-cancel would put it back. Insert only, like svc_usage_of_inserted_sms. Row-level
-- because PostgreSQL allows no transition table on a trigger with a column list.
create or replace function svc_usage_of_updated_sms() returns trigger language plpgsql as $$
declare
  counted_before integer := case when old.status = 'CANCELLED' then 0 else 1 end;
  counted_after integer := case when new.status = 'CANCELLED' then 0 else 1 end;
begin
  insert into sms_usage_changes (tenant_id, bucket, messages, recipients, sms, lms, segments, estimated_cost,
                                 delivered, failed, opted_out, verification_codes, alimtalk, fallbacks)
  values (
    new.tenant_id,
    date_bin('15 minutes', new.created_at, timestamptz '2000-01-01 00:00:00+00'),
    counted_after - counted_before,
    counted_after * new.recipient_count - counted_before * old.recipient_count,
    counted_after * (new.message_type = 'SMS')::integer - counted_before * (old.message_type = 'SMS')::integer,
    counted_after * (new.message_type = 'LMS')::integer - counted_before * (old.message_type = 'LMS')::integer,
    counted_after * new.estimated_segments - counted_before * old.estimated_segments,
    counted_after * new.total_price - counted_before * old.total_price,
    counted_after * new.success_count - counted_before * old.success_count,
    counted_after * new.fail_count - counted_before * old.fail_count,
    counted_after * new.opted_out_count - counted_before * old.opted_out_count,
    counted_after * (new.kind = 'VERIFICATION_CODE')::integer - counted_before * (old.kind = 'VERIFICATION_CODE')::integer,
    counted_after * new.alimtalk_count - counted_before * old.alimtalk_count,
    counted_after * new.fallback_count - counted_before * old.fallback_count);
  return null;
end
$$;
