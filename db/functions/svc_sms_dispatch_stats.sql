-- Dispatch metrics read at scrape time (plugins/platform/metrics.ts): aggregates across tenants and nothing else (no ids, no
-- tenant, no content). "Due" is what a dispatcher would claim now by time: an advertisement waiting out the quiet
-- hours (advertising_open false, judged by the caller in SVC_TIME_ZONE) is pending, not due, so the oldest-due age
-- does not climb all night. SECURITY DEFINER: the runtime role sees one tenant at a time under RLS.
create or replace function svc_sms_dispatch_stats(advertising_open boolean default true)
returns table (pending bigint, dispatched bigint, due bigint, oldest_due_seconds double precision)
language sql stable security definer set search_path = public, pg_temp as $$
  select
    (select count(*) from sms_messages where status = 'PENDING'),
    (select count(*) from sms_messages where status = 'DISPATCHED'),
    (select count(*) from sms_messages where status = 'PENDING' and next_attempt_at <= now()
       and (advertising_open or purpose <> 'ADVERTISEMENT')),
    (select coalesce(extract(epoch from now() - min(next_attempt_at)), 0)::double precision
       from sms_messages where status = 'PENDING' and next_attempt_at <= now()
       and (advertising_open or purpose <> 'ADVERTISEMENT'))
$$;
revoke all on function svc_sms_dispatch_stats(boolean) from public;
grant execute on function svc_sms_dispatch_stats(boolean) to svc_app;
