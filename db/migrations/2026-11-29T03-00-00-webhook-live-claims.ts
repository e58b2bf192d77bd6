import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// The webhook claim (db/functions/svc_claim_due_webhook_events.sql) counts each tenant's live claims to hold it to its
// limit of deliveries at once. Claimed rows are the few in flight, while a tenant's undelivered rows may be thousands:
// this partial index keeps the count a probe of those few, at every claim.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_events_claimed on webhook_events (tenant_id, claimed_until) where claim_token is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index webhook_events_claimed`.execute(db)
}
