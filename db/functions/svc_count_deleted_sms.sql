-- Statement-level trigger of sms_messages: the counterpart of svc_count_inserted_sms for deletes (staff messages only).
create or replace function svc_count_deleted_sms() returns trigger language plpgsql as $$
begin
  update sms_message_counts c set messages = c.messages - d.n
  from (select tenant_id, sender_id, count(*) as n from removed where kind = 'STAFF' group by tenant_id, sender_id) d
  where c.tenant_id = d.tenant_id and c.sender_id = d.sender_id;
  return null;
end
$$;
