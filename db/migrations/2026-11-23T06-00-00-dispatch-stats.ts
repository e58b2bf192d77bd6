import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Dispatch metrics (DECISIONS 9, /metrics) are read at scrape time by the runtime role, which sees one tenant at a
// time under RLS. This function answers aggregates across tenants and nothing else: counts per unsettled status,
// the due backlog and the age of its oldest message; no ids, no tenant, no content. Settled statuses (DELIVERED,
// FAILED, ...) grow without bound and are counted as they happen instead; the two partial indexes keep every
// count here an index scan over unsettled rows only.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index sms_messages_dispatched on sms_messages (tenant_id) where status = 'DISPATCHED'`.execute(db)
  await sql`
    create function svc_sms_dispatch_stats()
    returns table (pending bigint, dispatched bigint, due bigint, oldest_due_seconds double precision)
    language sql stable security definer set search_path = public as $$
      select
        (select count(*) from sms_messages where status = 'PENDING'),
        (select count(*) from sms_messages where status = 'DISPATCHED'),
        (select count(*) from sms_messages where status = 'PENDING' and next_attempt_at <= now()),
        (select coalesce(extract(epoch from now() - min(next_attempt_at)), 0)::double precision
           from sms_messages where status = 'PENDING' and next_attempt_at <= now())
    $$`.execute(db)
  await sql`revoke all on function svc_sms_dispatch_stats() from public`.execute(db)
  await sql`grant execute on function svc_sms_dispatch_stats() to svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function svc_sms_dispatch_stats()`.execute(db)
  await sql`drop index sms_messages_dispatched`.execute(db)
}
