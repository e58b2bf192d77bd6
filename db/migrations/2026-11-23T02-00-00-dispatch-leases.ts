import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Dispatch leases (DECISIONS section 9). An instance now claims a message only when a worker is free to send it
// and keeps the lease alive while the attempt runs, so a dead instance strands only what it had handed to the
// provider. handed_over_at marks that moment for the current claim: set (with dispatch_attempts + 1) in the
// transaction just before the provider call, cleared by a new claim, so a claim can be given back only while it is
// still null.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sms_messages add column handed_over_at timestamptz`.execute(db)
  // Same contract as before (SKIP LOCKED, ids and tokens only, owner-privileged); a new claim starts unhanded.
  await sql`
    create or replace function svc_claim_due_sms(batch_size integer, lease_seconds integer)
    returns table (tenant_id bigint, sms_id bigint, claim_token uuid)
    language sql security definer set search_path = public as $$
      with due as (
        select m.tenant_id, m.id
        from sms_messages m
        where m.status = 'PENDING' and m.next_attempt_at <= now()
          and (m.claimed_until is null or m.claimed_until < now())
        order by m.next_attempt_at
        limit batch_size
        for update skip locked
      )
      update sms_messages m
        set claim_token = gen_random_uuid(), claimed_until = now() + make_interval(secs => lease_seconds),
            handed_over_at = null
      from due
      where m.tenant_id = due.tenant_id and m.id = due.id
      returning m.tenant_id, m.id, m.claim_token
    $$`.execute(db)
  await sql`revoke all on function svc_claim_due_sms(integer, integer) from public`.execute(db)
  await sql`grant execute on function svc_claim_due_sms(integer, integer) to svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function svc_claim_due_sms(batch_size integer, lease_seconds integer)
    returns table (tenant_id bigint, sms_id bigint, claim_token uuid)
    language sql security definer set search_path = public as $$
      with due as (
        select m.tenant_id, m.id
        from sms_messages m
        where m.status = 'PENDING' and m.next_attempt_at <= now()
          and (m.claimed_until is null or m.claimed_until < now())
        order by m.next_attempt_at
        limit batch_size
        for update skip locked
      )
      update sms_messages m
        set claim_token = gen_random_uuid(), claimed_until = now() + make_interval(secs => lease_seconds)
      from due
      where m.tenant_id = due.tenant_id and m.id = due.id
      returning m.tenant_id, m.id, m.claim_token
    $$`.execute(db)
  await sql`alter table sms_messages drop column handed_over_at`.execute(db)
}
