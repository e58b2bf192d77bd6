-- The two-year notice job (lib/advertising/consent-notices.ts): the tenants that have a consent due for its notice
-- (confirmed at or before p_due_before, still alive after p_lapsed_before, and no notice queued for that confirmation
-- yet) or a queued notice whose hand-over is to be read. Tenant ids only: the job then opens a transaction per tenant,
-- where row-level security applies and the consents are claimed row by row (FOR UPDATE SKIP LOCKED).
-- SECURITY DEFINER: the runtime role sees one tenant at a time under RLS.
create or replace function svc_ad_consent_notice_tenants(p_due_before timestamptz, p_lapsed_before timestamptz, p_limit integer)
returns setof bigint
language sql stable security definer set search_path = public, pg_temp as $$
  select tenant_id from (
    select c.tenant_id from sms_ad_consents c
    where c.confirmed_at <= p_due_before and c.confirmed_at > p_lapsed_before
      and c.notice_for is distinct from c.confirmed_at and c.notice_sms_id is null
    union
    select c.tenant_id from sms_ad_consents c where c.notice_sms_id is not null
  ) due
  order by tenant_id
  limit greatest(p_limit, 1)
$$;
revoke all on function svc_ad_consent_notice_tenants(timestamptz, timestamptz, integer) from public;
grant execute on function svc_ad_consent_notice_tenants(timestamptz, timestamptz, integer) to svc_app;
