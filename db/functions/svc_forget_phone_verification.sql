-- Row trigger of users (before a change of phone, migration 2026-11-26T05-00-00): a new number is not verified,
-- and every live one-time code of the user went to the old one, so they die with it. A trigger rather than code in
-- each writer, so no path (a profile change, the in-process contract, an older instance during a rolling upgrade, an
-- operator's SQL) can move a verified mark to a number nobody proved; a statement that also sets phone_verified_at is
-- overruled too (marking a number verified is a statement of its own, after the change). For the same reason it
-- records the change: PHONE_CHANGED, both numbers masked, with the actor, address and request id the writer bound in
-- the transaction (app.audit_actor, app.audit_ip, app.audit_request: lib/account-security/phone/phone-change.ts), none for a writer
-- that bound nothing. Replacing a verified number stamps verified_phone_replaced_at, from which recovery and SMS codes
-- wait; replacing an unverified one keeps the stamp, so moving on to a third number never shortens the wait.
-- SECURITY INVOKER: the delete and the insert run as the writer, under RLS, in the writer's tenant.
create or replace function svc_forget_phone_verification() returns trigger language plpgsql as $$
begin
  if old.phone_verified_at is not null then
    new.verified_phone_replaced_at := now();
  end if;
  new.phone_verified_at := null;
  delete from one_time_codes where tenant_id = new.tenant_id and user_id = new.id;
  insert into audit_events (tenant_id, type, actor_id, target_type, target_id, ip_address, request_id, details)
  values (new.tenant_id, 'PHONE_CHANGED', nullif(current_setting('app.audit_actor', true), '')::bigint, 'USER',
          new.id::text, nullif(current_setting('app.audit_ip', true), ''), nullif(current_setting('app.audit_request', true), ''),
          jsonb_build_object('from', svc_mask_phone(old.phone), 'to', svc_mask_phone(new.phone)));
  return new;
end
$$;
