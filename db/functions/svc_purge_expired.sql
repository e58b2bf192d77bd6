-- The minute purge (plugins/maintenance.ts) of expired rows of every tenant. SECURITY DEFINER because the runtime
-- role sees one tenant at a time under RLS; it answers a count only.
create or replace function svc_purge_expired() returns integer
language plpgsql security definer set search_path = public as $$
declare
  purged integer := 0;
  n integer;
begin
  delete from revoked_access_tokens where expires_at < now();
  get diagnostics n = row_count; purged := purged + n;
  delete from session_revocations where expires_at < now();
  get diagnostics n = row_count; purged := purged + n;
  delete from sessions where refresh_expires_at < now();
  get diagnostics n = row_count; purged := purged + n;
  delete from login_failures where updated_at < now() - interval '1 day' and (locked_until is null or locked_until < now());
  get diagnostics n = row_count; purged := purged + n;
  delete from user_login_failures where updated_at < now() - interval '1 day' and (locked_until is null or locked_until < now());
  get diagnostics n = row_count; purged := purged + n;
  delete from rate_limit_windows where window_start < now() - interval '10 minutes';
  get diagnostics n = row_count; purged := purged + n;
  delete from idempotency_keys where expires_at < now();
  get diagnostics n = row_count; purged := purged + n;
  -- Only the current local day's counter decides a send (db/repos/sms-quota.ts). The local day of any time zone
  -- (UTC-12 to UTC+14) is the UTC day, the one before or the one after, so what is older than yesterday in UTC is
  -- no zone's today.
  delete from sms_daily_usage where day < (now() at time zone 'UTC')::date - 1;
  get diagnostics n = row_count; purged := purged + n;
  -- One-time codes: an expired code verifies nothing (lib/otp); the daily caps count local days, as above.
  delete from one_time_codes where expires_at < now();
  get diagnostics n = row_count; purged := purged + n;
  delete from one_time_code_days where day < (now() at time zone 'UTC')::date - 1;
  get diagnostics n = row_count; purged := purged + n;
  delete from one_time_code_phone_days where day < (now() at time zone 'UTC')::date - 1;
  get diagnostics n = row_count; purged := purged + n;
  -- The second step of a login (lib/auth/login-second-step.ts): an expired challenge opens nothing.
  delete from mfa_challenges where expires_at < now();
  get diagnostics n = row_count; purged := purged + n;
  -- Webhook events delivered or given up are kept 7 days for support (lib/webhooks), a bounded batch a minute.
  delete from webhook_events e
  using (
    select tenant_id, id from webhook_events
    where coalesce(delivered_at, given_up_at) < now() - interval '7 days'
    limit 5000
  ) old
  where e.tenant_id = old.tenant_id and e.id = old.id;
  get diagnostics n = row_count; purged := purged + n;
  return purged;
end
$$;
revoke all on function svc_purge_expired() from public;
grant execute on function svc_purge_expired() to svc_app;
