-- Row-level trigger of sms_messages, beside svc_usage_of_updated_sms and for the same reason apart from it as
-- svc_consent_usage_of_inserted_sms: fired (WHEN) when a message's no-consent count changes (a hand-over leaves out
-- a recipient whose consent lapsed or was withdrawn) or a message that counts here enters or leaves CANCELLED;
-- journals the difference in the bucket of its acceptance.
create or replace function svc_consent_usage_of_updated_sms() returns trigger language plpgsql as $$
declare
  counted_before integer := case when old.status = 'CANCELLED' then 0 else 1 end;
  counted_after integer := case when new.status = 'CANCELLED' then 0 else 1 end;
begin
  insert into sms_usage_changes (tenant_id, bucket, no_consent, consent_notices)
  values (
    new.tenant_id,
    date_bin('15 minutes', new.created_at, timestamptz '2000-01-01 00:00:00+00'),
    counted_after * new.no_consent_count - counted_before * old.no_consent_count,
    counted_after * (new.kind = 'CONSENT_NOTICE')::integer - counted_before * (old.kind = 'CONSENT_NOTICE')::integer);
  return null;
end
$$;
