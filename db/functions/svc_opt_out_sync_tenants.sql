-- The 080 list's reading (lib/advertising/opt-out-sync.ts): the tenants with an opt-out number and an APPROVED sender
-- number of p_provider, whose refusals the provider's 080 list may hold. Tenant ids only: the job then opens a
-- transaction per tenant, where row-level security applies. SECURITY DEFINER: the runtime role sees one tenant at a
-- time under RLS.
create or replace function svc_opt_out_sync_tenants(p_provider varchar)
returns setof bigint
language sql stable security definer set search_path = public, pg_temp as $$
  select a.tenant_id from sms_advertising_settings a
  where a.opt_out_number is not null
    and exists (select 1 from sms_sender_settings s
                where s.tenant_id = a.tenant_id and s.provider = p_provider and s.registration_status = 'APPROVED'
                  and s.sender_number is not null)
  order by a.tenant_id
$$;
revoke all on function svc_opt_out_sync_tenants(varchar) from public;
grant execute on function svc_opt_out_sync_tenants(varchar) to svc_app;
