-- Raises SV003 (unknown tenant) or SV010 (tenant not ACTIVE) for svc_request_scope. VOLATILE so it is never
-- evaluated early.
create or replace function svc_refuse_inactive_tenant(tenant_status varchar) returns boolean
language plpgsql volatile security invoker as $$
begin
  if tenant_status is null then
    raise exception 'unknown tenant' using errcode = 'SV003';
  end if;
  raise exception 'tenant not active' using errcode = 'SV010';
end
$$;
