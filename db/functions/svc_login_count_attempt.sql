-- The lockout rule, in one place for both counters of failed logins: counts one attempt to prove a password before
-- it is checked, on the counter's row of the key (svc_login_admit_user: user_login_failures by tenant and user;
-- svc_login_admit: login_failures by the key as presented), and reads that row's lock. The upsert and the lock read
-- are one statement, so a lock set meanwhile by another attempt reads as "busy", never as "admitted". The counter
-- and its key columns are the callers' literal names, quoted here. SECURITY INVOKER: runs as the caller (svc_app),
-- under RLS, with the caller's own privileges on the counter.
create or replace function svc_login_count_attempt(
  counter text, key_column_a text, key_a anyelement, key_column_b text, key_b anyelement,
  max_failures integer, lock_seconds integer, out admitted boolean, out locked_until timestamptz
)
language plpgsql security invoker as $$
begin
  -- The count starts afresh once a lock has ended, or once it has stalled for a lock period (attempts that
  -- never finished, e.g. an instance that died mid-check). The row lock taken by the upsert serialises attempts.
  -- $1 and $2 are the key, $3 max_failures, $4 lock_seconds.
  execute format($q$
    with attempt as (
      insert into %1$I as f (%2$I, %3$I, failures, locked_until, updated_at)
      values ($1, $2, 1, null, now())
      on conflict (%2$I, %3$I) do update set
        failures = case when f.locked_until is null and f.failures < $3 then f.failures + 1 else 1 end,
        locked_until = null,
        updated_at = now()
      where (f.locked_until is null and f.failures < $3)
         or f.locked_until <= now()
         or (f.locked_until is null and f.updated_at < now() - make_interval(secs => $4))
      returning 1
    )
    select exists (select 1 from attempt),
           (select l.locked_until from %1$I l where l.%2$I = $1 and l.%3$I = $2)
    $q$, counter, key_column_a, key_column_b)
    into admitted, locked_until
    using key_a, key_b, max_failures, lock_seconds;
end
$$;
revoke all on function svc_login_count_attempt(text, text, anyelement, text, anyelement, integer, integer) from public;
grant execute on function svc_login_count_attempt(text, text, anyelement, text, anyelement, integer, integer) to svc_app;
