-- Opens a session, the one way a login (its password proven) and a registration both do it (lib/sign-in/open-session.ts),
-- in the caller's tenant transaction after its set_config: locks the user (sign-ins and credential changes of one
-- user serialise), forgives the user's failed logins when asked (a login's password is proven; a registration has
-- none to forgive), and for an ACTIVE user stores an upgraded hash if given, ends the session of the same device
-- category (SESSION_REPLACED_BY_LOGIN: reason kept until its refresh token would have expired, access JTI
-- blacklisted until it expires, row deleted) and stores the new one. Each statement of a plpgsql function reads a
-- fresh snapshot, so after waiting for the lock it sees the session the previous holder stored. A user that is not
-- ACTIVE gets no writes but the forgiveness. SECURITY INVOKER: runs as svc_app, under RLS.
create or replace function svc_login_open_session(
  login_user_id bigint,
  forgive_failures boolean,
  upgraded_password_hash varchar,
  new_sid uuid,
  new_device_category varchar,
  new_user_agent varchar,
  new_ip_address varchar,
  new_access_jti uuid,
  new_access_expires_at timestamptz,
  new_refresh_jti uuid,
  new_refresh_expires_at timestamptz,
  out user_role varchar,
  out user_status varchar
)
language plpgsql security invoker as $$
#variable_conflict use_column
declare
  locked record;
  user_found boolean;
begin
  select u.tenant_id, u.role, u.status into locked from users u where u.id = login_user_id for update;
  user_found := found;
  if not user_found then
    return;
  end if;
  if forgive_failures then
    delete from user_login_failures f where f.tenant_id = locked.tenant_id and f.user_id = login_user_id;
  end if;
  user_role := locked.role;
  user_status := locked.status;
  if locked.status <> 'ACTIVE' then
    return;
  end if;

  if upgraded_password_hash is not null then
    update users u set password_hash = upgraded_password_hash, updated_at = now() where u.id = login_user_id;
  end if;

  with ended as (
    delete from sessions s where s.user_id = login_user_id and s.device_category = new_device_category
    returning s.tenant_id, s.sid, s.access_jti, s.access_expires_at, s.refresh_expires_at
  ), reasons as (
    insert into session_revocations (tenant_id, sid, reason, expires_at)
    select e.tenant_id, e.sid, 'SESSION_REPLACED_BY_LOGIN', e.refresh_expires_at from ended e
    on conflict (tenant_id, sid) do update set reason = excluded.reason, expires_at = excluded.expires_at
  )
  insert into revoked_access_tokens (jti, expires_at)
  select e.access_jti, e.access_expires_at from ended e
  on conflict (jti) do nothing;

  insert into sessions (tenant_id, sid, user_id, device_category, user_agent, ip_address, access_jti,
                        access_expires_at, refresh_jti, refresh_expires_at)
  values (locked.tenant_id, new_sid, login_user_id, new_device_category, new_user_agent, new_ip_address,
          new_access_jti, new_access_expires_at, new_refresh_jti, new_refresh_expires_at);
end
$$;
revoke all on function svc_login_open_session(bigint, boolean, varchar, uuid, varchar,
  varchar, varchar, uuid, timestamptz, uuid, timestamptz) from public;
grant execute on function svc_login_open_session(bigint, boolean, varchar, uuid, varchar,
  varchar, varchar, uuid, timestamptz, uuid, timestamptz) to svc_app;
