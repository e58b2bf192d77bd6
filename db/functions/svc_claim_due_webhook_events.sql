-- The webhook deliverer's claim (db/repos/events/webhook-events.ts): due undelivered events across tenants, answered as
-- (tenant, id, claim token) only; every read of the event happens later in its tenant's context. The lease outlasts a
-- delivery's time limit: a dead instance's claims lapse and another delivers them (at least once).
-- Fair across tenants: each tenant's due events are ranked oldest first and the batch takes every tenant's first
-- before any tenant's second, so one tenant's backlog never stands between another tenant's event and the next free
-- worker. A tenant has at most tenant_limit live claims (SVC_WEBHOOK_TENANT_CONCURRENCY) counting every instance's:
-- claims take turns on an advisory lock, and the count is a later statement of this volatile function, so at READ
-- COMMITTED it reads with a snapshot taken after the lock and sees the claims of whoever held it before. An
-- instance of an earlier release passes no tenant_limit and gets the default.
-- SECURITY DEFINER: the runtime role cannot see across tenants.
create or replace function svc_claim_due_webhook_events(batch_size integer, lease_seconds integer, tenant_limit integer default 2)
returns table (tenant_id bigint, event_id bigint, claim_token uuid)
language sql volatile security definer set search_path = public, pg_temp as $$
  select pg_advisory_xact_lock(hashtextextended('svc_claim_due_webhook_events', 0));
  with recursive waiting_tenants (tenant_id) as (
    -- The tenants with undelivered events, one probe of webhook_events_due each however long their backlogs.
    (select e.tenant_id from webhook_events e
     where e.delivered_at is null and e.given_up_at is null
     order by e.tenant_id limit 1)
    union all
    select (select e.tenant_id from webhook_events e
            where e.delivered_at is null and e.given_up_at is null and e.tenant_id > w.tenant_id
            order by e.tenant_id limit 1)
    from waiting_tenants w
    where w.tenant_id is not null
  ), ranked as (
    select due.tenant_id, due.id, due.next_attempt_at, due.rank
    from waiting_tenants w
    cross join lateral (
      select count(*)::integer as held from webhook_events c
      where c.tenant_id = w.tenant_id and c.claim_token is not null and c.claimed_until >= now()
    ) live
    cross join lateral (
      select e.tenant_id, e.id, e.next_attempt_at, row_number() over (order by e.next_attempt_at) as rank
      from webhook_events e
      where e.tenant_id = w.tenant_id and e.delivered_at is null and e.given_up_at is null
        and e.next_attempt_at <= now() and (e.claimed_until is null or e.claimed_until < now())
      order by e.next_attempt_at
      limit greatest(tenant_limit - live.held, 0)
    ) due
    where w.tenant_id is not null
    order by due.rank, due.next_attempt_at
    limit batch_size
  ), locked as (
    -- Skips a row another statement holds (an attempt recorded as its lease lapses) and checks it again once
    -- locked: the batch only shrinks, so no tenant ever goes past its limit.
    select e.tenant_id, e.id, ranked.rank, ranked.next_attempt_at
    from webhook_events e
    join ranked on e.tenant_id = ranked.tenant_id and e.id = ranked.id
    where e.delivered_at is null and e.given_up_at is null
      and (e.claimed_until is null or e.claimed_until < now())
    for update of e skip locked
  ), claimed as (
    update webhook_events e
      set claim_token = gen_random_uuid(), claimed_until = now() + make_interval(secs => lease_seconds)
    from locked
    where e.tenant_id = locked.tenant_id and e.id = locked.id
    returning e.tenant_id, e.id, e.claim_token, locked.rank, locked.next_attempt_at
  )
  -- In the fair order: the deliverer starts its claims in the order it gets them.
  select claimed.tenant_id, claimed.id, claimed.claim_token from claimed order by claimed.rank, claimed.next_attempt_at
$$;
revoke all on function svc_claim_due_webhook_events(integer, integer, integer) from public;
grant execute on function svc_claim_due_webhook_events(integer, integer, integer) to svc_app;
