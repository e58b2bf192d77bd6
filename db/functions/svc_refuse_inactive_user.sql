-- Raises SV003 (unknown user) or SV015 (user not ACTIVE) for svc_request_scope. VOLATILE so it is never evaluated
-- early.
create or replace function svc_refuse_inactive_user(user_status varchar) returns boolean
language plpgsql volatile security invoker as $$
begin
  if user_status is null then
    raise exception 'unknown user' using errcode = 'SV003';
  end if;
  raise exception 'user not active' using errcode = 'SV015';
end
$$;
