-- Row trigger of users (before a change of phone, migration 2026-11-26T05-00-00): a new number is not verified,
-- and every live one-time code of the user went to the old one, so they die with it. A trigger rather than code in
-- each writer, so no path (a profile change, the in-process contract, an older instance during a rolling upgrade)
-- can move a verified mark to a number nobody proved; a statement that also sets phone_verified_at is overruled too
-- (marking a number verified is a statement of its own, after the change). Replacing a verified number stamps
-- verified_phone_replaced_at, from which recovery and SMS codes wait (lib/auth/phone-change.ts); replacing an
-- unverified one keeps the stamp, so moving on to a third number never shortens the wait. SECURITY INVOKER: the
-- delete runs as the writer, under RLS, in the writer's tenant.
create or replace function svc_forget_phone_verification() returns trigger language plpgsql as $$
begin
  if old.phone_verified_at is not null then
    new.verified_phone_replaced_at := now();
  end if;
  new.phone_verified_at := null;
  delete from one_time_codes where tenant_id = new.tenant_id and user_id = new.id;
  return new;
end
$$;
