-- The dispatcher's claim (db/repos/dispatch/dispatch.ts): due PENDING messages across tenants, SKIP LOCKED so instances never
-- take the same row, answered as (tenant, id, claim token) only. Held messages are filtered out, not claimed: the
-- tenant is not ACTIVE, or a live-provider message's stored sender number is not the tenant's current APPROVED one
-- (every tenant sends through one provider account, so a number rejected or replaced since the message was stored
-- must not go out). A system message from system_sender (SVC_SMS_SYSTEM_SENDER, the service's own number) does not
-- wait for the tenant's number. A message past its discard_after is claimed even when held, so that the hand-over
-- ends it FAILED and its text is erased. An advertisement is claimed only while advertising_open: the dispatcher
-- passes false in the quiet hours of SVC_TIME_ZONE (lib/advertising/quiet-hours.ts, its clock), and an instance of an
-- earlier release, which passes no value, never claims one. A new claim starts unhanded (handed_over_at null).
-- SECURITY DEFINER: the runtime role cannot see across tenants.
create or replace function svc_claim_due_sms(
  batch_size integer, lease_seconds integer, system_sender varchar, advertising_open boolean default false
)
returns table (tenant_id bigint, sms_id bigint, claim_token uuid)
language sql security definer set search_path = public, pg_temp as $$
  with due as (
    select m.tenant_id, m.id
    from sms_messages m
    where m.status = 'PENDING' and m.next_attempt_at <= now()
      and (m.claimed_until is null or m.claimed_until < now())
      and (advertising_open or m.purpose <> 'ADVERTISEMENT')
      and (m.discard_after <= now() or (
        exists (select 1 from tenants t where t.id = m.tenant_id and t.status = 'ACTIVE')
        and (m.provider <> 'extsms'
          or (m.kind <> 'STAFF' and m.sender_number = system_sender)
          or exists (
            select 1 from sms_sender_settings s
            where s.tenant_id = m.tenant_id and s.provider = 'extsms' and s.registration_status = 'APPROVED'
              and s.sender_number = m.sender_number))))
    order by m.next_attempt_at
    limit batch_size
    for update of m skip locked
  )
  update sms_messages m
    set claim_token = gen_random_uuid(), claimed_until = now() + make_interval(secs => lease_seconds),
        handed_over_at = null
  from due
  where m.tenant_id = due.tenant_id and m.id = due.id
  returning m.tenant_id, m.id, m.claim_token
$$;
revoke all on function svc_claim_due_sms(integer, integer, varchar, boolean) from public;
grant execute on function svc_claim_due_sms(integer, integer, varchar, boolean) to svc_app;
