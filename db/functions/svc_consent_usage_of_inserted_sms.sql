-- Statement-level trigger of sms_messages, beside svc_usage_of_inserted_sms: journals the figures of consent to
-- advertising (db/migrations/2026-11-29T08-00-00-ad-consents.ts) into sms_usage_changes, in the same buckets:
-- no_consent (an advertisement's recipients left out for want of a live consent; also counted in recipients by the
-- other trigger) and consent_notices (CONSENT_NOTICE system messages; also counted in messages). A trigger of its
-- own, created by the migration that added these columns, so the older function, which migrations replayed from an
-- empty database define at their own point in history, never names a column that does not exist there yet. Only
-- messages that count something here write a row; a message stored CANCELLED counts nothing.
create or replace function svc_consent_usage_of_inserted_sms() returns trigger language plpgsql as $$
begin
  insert into sms_usage_changes (tenant_id, bucket, no_consent, consent_notices)
  select tenant_id, date_bin('15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'),
         sum(no_consent_count), count(*) filter (where kind = 'CONSENT_NOTICE')
  from inserted
  where status <> 'CANCELLED' and (no_consent_count > 0 or kind = 'CONSENT_NOTICE')
  group by 1, 2;
  return null;
end
$$;
