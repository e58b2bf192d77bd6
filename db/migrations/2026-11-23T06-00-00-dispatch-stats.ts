import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Dispatch metrics (GET /metrics) are read at scrape time by the runtime role, which sees one tenant at a
// time under RLS. This function answers aggregates across tenants and nothing else: counts per unsettled status,
// the due backlog and the age of its oldest message; no ids, no tenant, no content. Settled statuses (DELIVERED,
// FAILED, ...) grow without bound and are counted as they happen instead; the two partial indexes keep every
// count here an index scan over unsettled rows only.
// svc_sms_dispatch_stats lives in db/functions and is applied after the migrations (db/function-files.ts); this
// migration stays listed because databases record that it ran.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index sms_messages_dispatched on sms_messages (tenant_id) where status = 'DISPATCHED'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index sms_messages_dispatched`.execute(db)
}
