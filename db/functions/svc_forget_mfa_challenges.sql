-- Row trigger of users (after a change of password hash, migration 2026-11-27T00-00-00): a login's second step
-- waiting on the old password dies with it, so a password change or reset, by any writer (the user, a recovery, the
-- in-process contract), also ends a sign-in half done with the old password. SECURITY INVOKER: the delete runs as
-- the writer, under RLS, in the writer's tenant.
create or replace function svc_forget_mfa_challenges() returns trigger language plpgsql as $$
begin
  delete from mfa_challenges where tenant_id = new.tenant_id and user_id = new.id;
  return null;
end
$$;
