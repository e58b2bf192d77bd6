import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// The audit log filtered by actor, alone or with a type, read the whole log through audit_events_recent and
// filtered it: a rare actor's page, and the count of any actor's events, cost the length of the log. With these,
// every filter of GET /v1/audit-events (none, type, actor, both; a time range on top) has an index that yields
// exactly its events, newest first, so a page and the bounded count read only what they answer.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index audit_events_by_actor on audit_events (tenant_id, actor_id, occurred_at desc, id desc)`.execute(db)
  await sql`
    create index audit_events_by_actor_type on audit_events (tenant_id, actor_id, type, occurred_at desc, id desc)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index audit_events_by_actor_type`.execute(db)
  await sql`drop index audit_events_by_actor`.execute(db)
}
