import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// A login sent 14 statements. Its bcrypt comparison keeps both cores busy, so every round trip is taken from
// bcrypt's share; these two functions make the login's admission and its session writes one call each.
// SECURITY INVOKER on purpose: they run as the caller (svc_app), so RLS applies to every tenant table they touch,
// inside the tenant transaction the caller opened.
export async function up(db: Kysely<any>): Promise<void> {
  // Counts the attempt before its password is checked and, in the same call, finds the tenant it names (tenants
  // and owner_directory have no RLS). The upsert and the lock read stay one statement: the read sees the snapshot
  // of the upsert, so a lock set meanwhile by another attempt reads as "busy", never as "admitted".
  await sql`
    create function svc_login_admit(
      attempt_scope varchar,
      attempt_login_id varchar,
      max_failures integer,
      lock_seconds integer,
      entry_custom_id varchar,
      entry_owner_login_id varchar,
      out admitted boolean,
      out locked_until timestamptz,
      out tenant_id bigint,
      out tenant_slug varchar,
      out tenant_custom_id varchar,
      out tenant_custom_domain varchar,
      out tenant_name varchar,
      out tenant_status varchar,
      out tenant_onboarding_completed_at timestamptz,
      out owner_user_id bigint
    )
    language plpgsql security invoker as $$
    #variable_conflict use_column
    begin
      -- The count starts afresh once a lock has ended, or once it has stalled for a lock period (attempts that
      -- never finished, e.g. an instance that died mid-check). The row lock taken by the upsert serialises attempts.
      with attempt as (
        insert into login_failures as f (scope, login_id, failures, locked_until, updated_at)
        values (attempt_scope, attempt_login_id, 1, null, now())
        on conflict (scope, login_id) do update set
          failures = case when f.locked_until is null and f.failures < max_failures then f.failures + 1 else 1 end,
          locked_until = null,
          updated_at = now()
        where (f.locked_until is null and f.failures < max_failures)
           or f.locked_until <= now()
           or (f.locked_until is null and f.updated_at < now() - make_interval(secs => lock_seconds))
        returning 1
      )
      select exists (select 1 from attempt),
             (select l.locked_until from login_failures l where l.scope = attempt_scope and l.login_id = attempt_login_id)
        into admitted, locked_until;

      if entry_custom_id is not null then
        select t.id, t.slug, t.custom_id, t.custom_domain, t.name, t.status, t.onboarding_completed_at, null
          into tenant_id, tenant_slug, tenant_custom_id, tenant_custom_domain, tenant_name, tenant_status,
               tenant_onboarding_completed_at, owner_user_id
          from tenants t where t.custom_id = entry_custom_id;
      else
        select t.id, t.slug, t.custom_id, t.custom_domain, t.name, t.status, t.onboarding_completed_at, o.user_id
          into tenant_id, tenant_slug, tenant_custom_id, tenant_custom_domain, tenant_name, tenant_status,
               tenant_onboarding_completed_at, owner_user_id
          from owner_directory o join tenants t on t.id = o.tenant_id where o.user_login_id = entry_owner_login_id;
      end if;
    end
    $$`.execute(db)
  await sql`
    revoke all on function svc_login_admit(varchar, varchar, integer, integer, varchar, varchar) from public`.execute(db)
  await sql`
    grant execute on function svc_login_admit(varchar, varchar, integer, integer, varchar, varchar) to svc_app`.execute(db)

  // The session transaction of a login whose password is proven, after its set_config: locks the user (logins and
  // credential changes of one user serialise), forgives the attempt's failure key, and, for an ACTIVE user, stores
  // an upgraded hash if given, ends the session of the same device category (SESSION_REPLACED_BY_LOGIN: reason
  // kept until its refresh token would have expired, access JTI blacklisted until it expires, row deleted) and
  // stores the new one. Each statement of a plpgsql function reads a fresh snapshot, so after waiting for the lock
  // it sees the session that the previous holder stored. A user that is missing or not ACTIVE gets no writes but
  // the forgiveness; the caller commits either way and answers from user_status.
  await sql`
    create function svc_login_open_session(
      login_user_id bigint,
      attempt_scope varchar,
      attempt_login_id varchar,
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
      delete from login_failures f where f.scope = attempt_scope and f.login_id = attempt_login_id;
      if not user_found then
        return;
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
    $$`.execute(db)
  await sql`
    revoke all on function svc_login_open_session(bigint, varchar, varchar, varchar, uuid, varchar, varchar, varchar,
      uuid, timestamptz, uuid, timestamptz) from public`.execute(db)
  await sql`
    grant execute on function svc_login_open_session(bigint, varchar, varchar, varchar, uuid, varchar, varchar, varchar,
      uuid, timestamptz, uuid, timestamptz) to svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop function svc_login_open_session(bigint, varchar, varchar, varchar, uuid, varchar, varchar, varchar, uuid,
      timestamptz, uuid, timestamptz)`.execute(db)
  await sql`drop function svc_login_admit(varchar, varchar, integer, integer, varchar, varchar)`.execute(db)
}
