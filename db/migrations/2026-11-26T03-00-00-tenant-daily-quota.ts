import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// A tenant's own daily recipient quota (npm run tenant:quota), read by the send's quota statements; null: the
// service's SVC_SMS_TENANT_DAILY_RECIPIENTS; 0: unlimited. Only the owner (operations) changes it: the runtime role
// has no UPDATE on tenants.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table tenants add column daily_recipient_quota integer check (daily_recipient_quota >= 0)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table tenants drop column daily_recipient_quota`.execute(db)
}
