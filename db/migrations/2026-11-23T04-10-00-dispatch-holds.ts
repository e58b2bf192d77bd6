import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Held dispatch (DECISIONS 9, "Sessions and login"): a message whose tenant is not ACTIVE, or whose live-provider
// (extsms) sender setting is not APPROVED, is not claimed. It is skipped by the claim's filter (not claimed and
// given back), so held messages never fill a batch ahead of other tenants' due messages, stay PENDING with their
// attempts untouched, and are claimed as soon as the tenant or sender is in order again. Existing rows: unchanged.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function svc_claim_due_sms(batch_size integer, lease_seconds integer)
    returns table (tenant_id bigint, sms_id bigint, claim_token uuid)
    language sql security definer set search_path = public as $$
      with due as (
        select m.tenant_id, m.id
        from sms_messages m
        where m.status = 'PENDING' and m.next_attempt_at <= now()
          and (m.claimed_until is null or m.claimed_until < now())
          and exists (select 1 from tenants t where t.id = m.tenant_id and t.status = 'ACTIVE')
          and (m.provider <> 'extsms' or exists (
            select 1 from sms_sender_settings s
            where s.tenant_id = m.tenant_id and s.provider = 'extsms' and s.registration_status = 'APPROVED'))
        order by m.next_attempt_at
        limit batch_size
        for update of m skip locked
      )
      update sms_messages m
        set claim_token = gen_random_uuid(), claimed_until = now() + make_interval(secs => lease_seconds),
            handed_over_at = null
      from due
      where m.tenant_id = due.tenant_id and m.id = due.id
      returning m.tenant_id, m.id, m.claim_token
    $$`.execute(db)
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
        set claim_token = gen_random_uuid(), claimed_until = now() + make_interval(secs => lease_seconds),
            handed_over_at = null
      from due
      where m.tenant_id = due.tenant_id and m.id = due.id
      returning m.tenant_id, m.id, m.claim_token
    $$`.execute(db)
}
