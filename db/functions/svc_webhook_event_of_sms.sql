-- Row-level trigger of sms_messages, fired (WHEN) when a staff message reaches SENT, FAILED, PARTIAL or CANCELLED:
-- writes the delivery event into the outbox (webhook_events) in the same transaction, if the tenant's endpoint
-- subscribes to its type, so an event exists exactly when the change that causes it committed (lib/events). The body
-- is the event as it will be sent, fixed now: every retry sends the same bytes. Runs as the writer, under RLS.
create or replace function svc_webhook_event_of_sms() returns trigger language plpgsql as $$
declare
  event_type text := case when new.status = 'CANCELLED' then 'sms.message.cancelled' else 'sms.message.completed' end;
begin
  insert into webhook_events (tenant_id, event_type, body)
  select new.tenant_id, event_type, json_build_object(
    'type', event_type,
    'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'data', json_build_object(
      'messageId', new.id,
      'status', new.status,
      'purpose', new.purpose,
      'recipientCount', new.recipient_count,
      'successCount', new.success_count,
      'failCount', new.fail_count,
      'optedOutCount', new.opted_out_count))::text
  from webhook_endpoints e
  where e.tenant_id = new.tenant_id and event_type = any (e.events);
  return null;
end
$$;
