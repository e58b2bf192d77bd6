-- `npm run sender:pending` (db/repos/sms/sender-settings.ts): sender numbers of one provider awaiting an operator across
-- tenants, with exactly what scripts/approve-sender.sh needs, and the tenant (if any) for which the same number is
-- already APPROVED: such an approval is refused (SENDER_NUMBER_IN_USE), since every tenant sends through one
-- provider account. SECURITY DEFINER, so the shell never needs the owner's credentials.
create or replace function svc_pending_sender_numbers(for_provider varchar)
returns table (tenant_slug varchar, tenant_name varchar, sender_number varchar, requested_at timestamptz, in_use_by varchar)
language sql stable security definer set search_path = public, pg_temp as $$
  select t.slug, t.name, s.sender_number, s.updated_at,
    (select o.slug
     from sms_sender_settings a
     join tenants o on o.id = a.tenant_id
     where a.provider = s.provider and a.sender_number = s.sender_number and a.registration_status = 'APPROVED'
       and a.tenant_id <> s.tenant_id
     order by o.slug
     limit 1)
  from sms_sender_settings s
  join tenants t on t.id = s.tenant_id
  where s.registration_status = 'PENDING' and s.provider = for_provider
  order by s.updated_at, t.slug
$$;
revoke all on function svc_pending_sender_numbers(varchar) from public;
grant execute on function svc_pending_sender_numbers(varchar) to svc_app;
