import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Dispatch leases. An instance now claims a message only when a worker is free to send it and keeps the lease alive
// while the attempt runs, so a dead instance strands only what it had handed to the provider. handed_over_at marks that
// moment for the current claim: set (with dispatch_attempts + 1) in the transaction just before the provider call,
// cleared by a new claim, so a claim can be given back only while it is still null.
// svc_claim_due_sms (a new claim starts unhanded) lives in db/functions and is applied after the migrations
// (db/function-files.ts); this migration stays listed because databases record that it ran.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sms_messages add column handed_over_at timestamptz`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sms_messages drop column handed_over_at`.execute(db)
}
