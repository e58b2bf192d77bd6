-- The last step of dropping a range of message ids past retention (plugins/sms-retention.ts), run by the owner in
-- one transaction once both partitions are detached (DETACH ... CONCURRENTLY, which no send or dispatch waits on):
-- takes the range's staff messages off the history totals (dropping a table fires no delete trigger), then drops the
-- two tables and forgets the range. Usage totals are kept apart and do not change. Returns the messages removed.
create or replace function svc_forget_sms_range(p_suffix varchar) returns bigint
language plpgsql set search_path = public as $$
declare
  messages_table text := 'sms_messages_' || p_suffix;
  recipients_table text := 'sms_recipients_' || p_suffix;
  removed bigint := 0;
begin
  if exists (select 1 from pg_inherits i where i.inhrelid = to_regclass(format('%I', messages_table))
             or i.inhrelid = to_regclass(format('%I', recipients_table))) then
    raise exception 'range % is still attached', p_suffix;
  end if;
  if to_regclass(format('%I', messages_table)) is not null then
    execute format($q$
      with gone as (
        select tenant_id, sender_id, count(*) as n from %I where kind = 'STAFF' group by tenant_id, sender_id
      ), counted as (
        update sms_message_counts c set messages = c.messages - gone.n
        from gone where c.tenant_id = gone.tenant_id and c.sender_id = gone.sender_id
      )
      select coalesce(sum(n), 0) from gone$q$, messages_table) into removed;
    execute format('drop table %I', messages_table);
  end if;
  execute format('drop table if exists %I', recipients_table);
  delete from sms_id_ranges where suffix = p_suffix;
  return removed;
end
$$;
revoke all on function svc_forget_sms_range(varchar) from public;
