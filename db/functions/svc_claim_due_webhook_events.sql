-- The webhook deliverer's claim (db/repos/webhook-events.ts): due undelivered events across tenants, SKIP LOCKED so
-- instances never take the same row, answered as (tenant, id, claim token) only; every read of the event happens
-- later in its tenant's context. The lease outlasts a delivery's time limit: a dead instance's claims lapse and
-- another delivers them (at least once). SECURITY DEFINER: the runtime role cannot see across tenants.
create or replace function svc_claim_due_webhook_events(batch_size integer, lease_seconds integer)
returns table (tenant_id bigint, event_id bigint, claim_token uuid)
language sql security definer set search_path = public as $$
  with due as (
    select e.tenant_id, e.id
    from webhook_events e
    where e.delivered_at is null and e.given_up_at is null and e.next_attempt_at <= now()
      and (e.claimed_until is null or e.claimed_until < now())
    order by e.next_attempt_at
    limit batch_size
    for update of e skip locked
  )
  update webhook_events e
    set claim_token = gen_random_uuid(), claimed_until = now() + make_interval(secs => lease_seconds)
  from due
  where e.tenant_id = due.tenant_id and e.id = due.id
  returning e.tenant_id, e.id, e.claim_token
$$;
revoke all on function svc_claim_due_webhook_events(integer, integer) from public;
grant execute on function svc_claim_due_webhook_events(integer, integer) to svc_app;
