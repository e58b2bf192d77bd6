-- A refresh in one statement (db/repos/sign-in/session-rotation.ts), which is its own transaction: the address budget,
-- tenant check, session lock, reuse detection, reuse grace (the token the last rotation replaced, within
-- reuse_grace_seconds, gets the current pair again: REISSUED) and rotation. It answers with an outcome instead of
-- raising, so a reuse revocation commits. SECURITY INVOKER: runs as svc_app, so RLS applies once it has bound
-- app.tenant_id.
--
-- The address budget (one counter row per address and minute, shared with login and registration) is checked
-- first with a plain read and counted last. Counting first held that row's lock through the whole rotation, so
-- every refresh from one address (a NAT, a carrier gateway) waited for the one before it to commit. Counted last,
-- the lock is held from the count to the commit only. The price: refreshes from one address that run at the same
-- moment all read the count before any of them is added, so up to that many more than the limit can pass in a
-- window (one at a time, the limit is exact).
create or replace function svc_rotate_session(
  claimed_tenant_id bigint,
  claimed_tenant_slug text,
  claimed_sid uuid,
  claimed_user_id bigint,
  presented_refresh_jti uuid,
  new_access_jti uuid,
  new_access_expires_at timestamptz,
  new_refresh_jti uuid,
  new_refresh_expires_at timestamptz,
  refreshed_at timestamptz,
  budget_key text,
  budget_limit integer,
  reuse_grace_seconds integer,
  out outcome text,
  out reason text,
  out role text,
  out access_jti uuid,
  out access_expires_at timestamptz,
  out refresh_jti uuid,
  out refresh_expires_at timestamptz,
  out budget_hits integer,
  out budget_window_start timestamptz
)
language plpgsql security invoker as $$
declare
  tenant_row record;
  session_row record;
begin
  select w.hits into budget_hits
    from rate_limit_windows w
    where w.key = budget_key and w.window_start = date_trunc('minute', now());
  <<rotation>>
  begin
    -- Beyond the budget nothing is read or written but the count.
    if coalesce(budget_hits, 0) >= budget_limit then
      outcome := 'OVER_BUDGET';
      exit rotation;
    end if;

    -- tenants has no RLS; an unknown or renamed tenant and an inactive one are told apart before any session
    -- lookup, as the error precedence requires.
    select t.slug, t.status into tenant_row from tenants t where t.id = claimed_tenant_id;
    if not found or tenant_row.slug <> claimed_tenant_slug then
      outcome := 'UNKNOWN_TENANT';
      exit rotation;
    end if;
    if tenant_row.status <> 'ACTIVE' then
      outcome := 'INACTIVE_TENANT';
      exit rotation;
    end if;

    perform set_config('app.tenant_id', claimed_tenant_id::text, true);

    -- The lock serialises refreshes of one session: of several with one token exactly one rotates, and the
    -- others, re-reading the row after it commits, see a JTI that is no longer current.
    select s.sid, s.user_id, s.access_jti, s.access_expires_at, s.refresh_jti, s.refresh_expires_at,
           s.previous_refresh_jti, s.last_refreshed_at, u.role as user_role, u.status as user_status
      into session_row
      from sessions s
      left join users u on u.tenant_id = s.tenant_id and u.id = s.user_id
      where s.sid = claimed_sid
      for update of s;
    if not found then
      -- Times are the caller's clock, the clock that set every expiry compared here.
      select r.reason into reason
        from session_revocations r
        where r.sid = claimed_sid and r.expires_at > refreshed_at;
      outcome := 'SESSION_ENDED';
      exit rotation;
    end if;

    -- Reuse grace (multi-tab clients): the token the last rotation replaced, presented within the window, gets
    -- the session's current pair again; nothing is written, so revocation by JTI still reaches every copy.
    if session_row.refresh_jti <> presented_refresh_jti and session_row.user_id = claimed_user_id
       and reuse_grace_seconds > 0 and session_row.previous_refresh_jti = presented_refresh_jti
       and session_row.last_refreshed_at > refreshed_at - make_interval(secs => reuse_grace_seconds) then
      if session_row.user_status is distinct from 'ACTIVE' then
        outcome := 'INACTIVE_USER';
        exit rotation;
      end if;
      outcome := 'REISSUED';
      role := session_row.user_role;
      access_jti := session_row.access_jti;
      access_expires_at := session_row.access_expires_at;
      refresh_jti := session_row.refresh_jti;
      refresh_expires_at := session_row.refresh_expires_at;
      exit rotation;
    end if;

    if session_row.refresh_jti <> presented_refresh_jti or session_row.user_id <> claimed_user_id then
      -- Reuse ends the session exactly as any revocation does: reason kept until the refresh token would
      -- have expired, the current access JTI blacklisted until its own expiry, the row deleted.
      delete from sessions s where s.sid = session_row.sid;
      insert into session_revocations (tenant_id, sid, reason, expires_at)
        values (claimed_tenant_id, session_row.sid, 'REFRESH_TOKEN_REUSED', session_row.refresh_expires_at)
        on conflict (tenant_id, sid) do update set reason = excluded.reason, expires_at = excluded.expires_at;
      insert into revoked_access_tokens (jti, expires_at)
        values (session_row.access_jti, session_row.access_expires_at)
        on conflict (jti) do nothing;
      outcome := 'REUSED';
      exit rotation;
    end if;

    if session_row.user_status is distinct from 'ACTIVE' then
      outcome := 'INACTIVE_USER';
      exit rotation;
    end if;

    -- The access token being replaced stops working now, not at its expiry.
    insert into revoked_access_tokens (jti, expires_at)
      values (session_row.access_jti, session_row.access_expires_at)
      on conflict (jti) do nothing;
    update sessions s
      set access_jti = new_access_jti, access_expires_at = new_access_expires_at,
          refresh_jti = new_refresh_jti, refresh_expires_at = new_refresh_expires_at,
          previous_refresh_jti = session_row.refresh_jti, last_refreshed_at = refreshed_at
      where s.sid = session_row.sid;
    -- A rotation commits without waiting for its WAL flush, which is most of a refresh's time. A crash can lose
    -- the rotations of the last moment (at most 3 x wal_writer_delay): those clients' next refresh presents a
    -- JTI the restored row does not hold, which ends the session as reuse, so the loss fails closed (sign in
    -- again). Every other outcome, the reuse revocation above included, keeps the durable commit.
    perform set_config('synchronous_commit', 'off', true);
    outcome := 'ROTATED';
    role := session_row.user_role;
    access_jti := new_access_jti;
    access_expires_at := new_access_expires_at;
    refresh_jti := new_refresh_jti;
    refresh_expires_at := new_refresh_expires_at;
  end;

  -- Counted last (see the top), whatever the outcome.
  insert into rate_limit_windows as w (key, window_start, hits)
    values (budget_key, date_trunc('minute', now()), 1)
    on conflict (key, window_start) do update set hits = w.hits + 1
    returning w.hits, w.window_start into budget_hits, budget_window_start;
end
$$;
revoke all on function svc_rotate_session(bigint, text, uuid, bigint, uuid, uuid,
  timestamptz, uuid, timestamptz, timestamptz, text, integer, integer) from public;
grant execute on function svc_rotate_session(bigint, text, uuid, bigint, uuid, uuid,
  timestamptz, uuid, timestamptz, timestamptz, text, integer, integer) to svc_app;
