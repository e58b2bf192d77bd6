-- The last step of dropping a range of message ids past retention (plugins/sms/sms-retention.ts), run by the owner in
-- one transaction once both partitions are detached (DETACH ... CONCURRENTLY, which no send or dispatch waits on):
-- counts the range's staff messages per sender, drops the two tables, then takes those counts off the history
-- totals (a dropped table fires no delete trigger) and forgets the range. The totals are updated last, so the
-- counter rows a send of the same sender updates are locked only from that update to the commit, never while a
-- table is dropped. Usage totals are kept apart and do not change. Returns the messages removed.
create or replace function svc_forget_sms_range(p_suffix varchar) returns bigint
language plpgsql set search_path = public as $$
declare
  messages_table text := 'sms_messages_' || p_suffix;
  recipients_table text := 'sms_recipients_' || p_suffix;
  tenants bigint[] := '{}';
  senders bigint[] := '{}';
  counts bigint[] := '{}';
begin
  if exists (select 1 from pg_inherits i where i.inhrelid = to_regclass(format('%I', messages_table))
             or i.inhrelid = to_regclass(format('%I', recipients_table))) then
    raise exception 'range % is still attached', p_suffix;
  end if;
  if to_regclass(format('%I', messages_table)) is not null then
    execute format($q$
      select coalesce(array_agg(tenant_id), '{}'), coalesce(array_agg(sender_id), '{}'), coalesce(array_agg(n), '{}')
      from (select tenant_id, sender_id, count(*) as n from %I where kind = 'STAFF' group by tenant_id, sender_id) gone$q$,
      messages_table) into tenants, senders, counts;
    execute format('drop table %I', messages_table);
  end if;
  execute format('drop table if exists %I', recipients_table);
  update sms_message_counts c set messages = c.messages - gone.n
  from unnest(tenants, senders, counts) as gone(tenant_id, sender_id, n)
  where c.tenant_id = gone.tenant_id and c.sender_id = gone.sender_id;
  delete from sms_id_ranges where suffix = p_suffix;
  return coalesce((select sum(n) from unnest(counts) as n), 0);
end
$$;
revoke all on function svc_forget_sms_range(varchar) from public;
