-- Dispatch metrics read at scrape time (plugins/metrics.ts): aggregates across tenants and nothing else (no ids, no
-- tenant, no content). SECURITY DEFINER: the runtime role sees one tenant at a time under RLS.
create or replace function svc_sms_dispatch_stats()
returns table (pending bigint, dispatched bigint, due bigint, oldest_due_seconds double precision)
language sql stable security definer set search_path = public as $$
  select
    (select count(*) from sms_messages where status = 'PENDING'),
    (select count(*) from sms_messages where status = 'DISPATCHED'),
    (select count(*) from sms_messages where status = 'PENDING' and next_attempt_at <= now()),
    (select coalesce(extract(epoch from now() - min(next_attempt_at)), 0)::double precision
       from sms_messages where status = 'PENDING' and next_attempt_at <= now())
$$;
revoke all on function svc_sms_dispatch_stats() from public;
grant execute on function svc_sms_dispatch_stats() to svc_app;
