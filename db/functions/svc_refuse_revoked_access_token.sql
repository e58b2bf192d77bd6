-- Raises SV004 (lib/db-errors.ts): called by svc_request_scope for a revoked access token, so the request's
-- transaction is aborted before its first real statement runs. VOLATILE so it is never evaluated early.
create or replace function svc_refuse_revoked_access_token() returns boolean
language plpgsql volatile security invoker as $$
begin
  raise exception 'access token revoked' using errcode = 'SV004';
end
$$;
