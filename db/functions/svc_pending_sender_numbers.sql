-- `npm run sender:pending` (db/repos/sender-settings.ts): sender numbers awaiting an operator across tenants, with
-- exactly what scripts/approve-sender.sh needs. SECURITY DEFINER, so the shell never needs the owner's credentials.
create or replace function svc_pending_sender_numbers()
returns table (tenant_slug varchar, tenant_name varchar, sender_number varchar, requested_at timestamptz)
language sql stable security definer set search_path = public as $$
  select t.slug, t.name, s.sender_number, s.updated_at
  from sms_sender_settings s
  join tenants t on t.id = s.tenant_id
  where s.registration_status = 'PENDING'
  order by s.updated_at, t.slug
$$;
revoke all on function svc_pending_sender_numbers() from public;
grant execute on function svc_pending_sender_numbers() to svc_app;
