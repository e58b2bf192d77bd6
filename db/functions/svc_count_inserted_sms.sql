-- Statement-level trigger of sms_messages: one upsert per insert statement keeps the per-(tenant, sender) counters
-- that answer a history page's total. Only staff messages are counted: the history never lists system messages.
create or replace function svc_count_inserted_sms() returns trigger language plpgsql as $$
begin
  insert into sms_message_counts as c (tenant_id, sender_id, messages)
  select tenant_id, sender_id, count(*) from inserted where kind = 'STAFF' group by tenant_id, sender_id
  on conflict (tenant_id, sender_id) do update set messages = c.messages + excluded.messages;
  return null;
end
$$;
