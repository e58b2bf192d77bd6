-- The approval call (db/repos/sms/sender-settings.ts): whether a number is APPROVED for another tenant of the same
-- provider. Every tenant sends through one provider account, so such a number would let one tenant send as
-- another. SECURITY DEFINER, answering a boolean only: the runtime role cannot see other tenants' rows. The
-- transaction-scoped lock on the number makes two approvals of the same number (for two tenants) take turns; the
-- check is a second statement of a volatile function, so it reads with a snapshot taken after the lock, and sees
-- the approval that held it once that committed.
create or replace function svc_sender_number_in_use(for_tenant bigint, for_provider varchar, number varchar)
returns boolean
language sql volatile security definer set search_path = public, pg_temp as $$
  select pg_advisory_xact_lock(hashtextextended('svc_sender_number:' || for_provider || ':' || number, 0));
  select exists (
    select 1 from sms_sender_settings s
    where s.provider = for_provider and s.sender_number = number and s.registration_status = 'APPROVED'
      and s.tenant_id <> for_tenant)
$$;
revoke all on function svc_sender_number_in_use(bigint, varchar, varchar) from public;
grant execute on function svc_sender_number_in_use(bigint, varchar, varchar) to svc_app;
