-- Row trigger of users and owner_directory: fills login_key for writers that leave it out (an operator's insert),
-- only where the fold is certain (printable ASCII: lower-casing); any other login id must come with its key
-- (computed by the service, lib/tenancy/identifiers.ts).
create or replace function svc_fill_login_key() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and new.user_login_id is distinct from old.user_login_id and new.login_key = old.login_key then
    new.login_key := null;
  end if;
  if new.login_key is null then
    if new.user_login_id !~ '^[!-~]+$' then
      raise exception 'login_key must be given for login id %', new.user_login_id using errcode = '23502';
    end if;
    new.login_key := lower(new.user_login_id);
  end if;
  return new;
end
$$;
