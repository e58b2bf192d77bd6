-- The minute purge (plugins/platform/maintenance.ts) of expired rows of every tenant: at most p_batch rows of each table per
-- call, so one call never holds its locks long or writes a burst of WAL; a backlog (a long stop) drains over a few
-- minutes. SECURITY DEFINER because the runtime role sees one tenant at a time under RLS; it answers a count only.
create or replace function svc_purge_expired(p_batch integer) returns integer
language plpgsql security definer set search_path = public, pg_temp as $$
declare
  -- Each table and what makes its rows expired.
  -- login_failures, user_login_failures: a day without failures, and no lockout running.
  -- sms_daily_usage and the one-time code days: only the current local day decides (db/repos/sms/sms-quota.ts,
  -- lib/account-security/codes), and the local day of any time zone (UTC-12 to UTC+14) is the UTC day, the one before or the one
  -- after, so what is older than yesterday in UTC is no zone's today.
  -- mfa_challenges: the second step of a login (lib/sign-in/login-second-step.ts); an expired one opens nothing.
  -- webhook_events: delivered or given up, kept 7 days for support (lib/events).
  -- passkey_enrolment_challenges, passkey_sign_in_challenges: a passkey ceremony's challenge (lib/passkeys); an
  -- expired one verifies nothing.
  expiries constant text[] := array[
    'revoked_access_tokens', 'expires_at < now()',
    'session_revocations', 'expires_at < now()',
    'sessions', 'refresh_expires_at < now()',
    'login_failures', 'updated_at < now() - interval ''1 day'' and (locked_until is null or locked_until < now())',
    'user_login_failures', 'updated_at < now() - interval ''1 day'' and (locked_until is null or locked_until < now())',
    'rate_limit_windows', 'window_start < now() - interval ''10 minutes''',
    'idempotency_keys', 'expires_at < now()',
    'sms_daily_usage', 'day < (now() at time zone ''UTC'')::date - 1',
    'one_time_codes', 'expires_at < now()',
    'one_time_code_days', 'day < (now() at time zone ''UTC'')::date - 1',
    'one_time_code_phone_days', 'day < (now() at time zone ''UTC'')::date - 1',
    'phone_verification_days', 'day < (now() at time zone ''UTC'')::date - 1',
    'mfa_challenges', 'expires_at < now()',
    'passkey_enrolment_challenges', 'expires_at < now()',
    'passkey_sign_in_challenges', 'expires_at < now()',
    'webhook_events', 'coalesce(delivered_at, given_up_at) < now() - interval ''7 days'''
  ];
  purged integer := 0;
  n integer;
begin
  for i in 1 .. array_length(expiries, 1) by 2 loop
    execute format('delete from %I where ctid = any(array(select ctid from %I where %s limit %s))',
      expiries[i], expiries[i], expiries[i + 1], p_batch);
    get diagnostics n = row_count;
    purged := purged + n;
  end loop;
  return purged;
end
$$;
revoke all on function svc_purge_expired(integer) from public;
grant execute on function svc_purge_expired(integer) to svc_app;
