import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Exactly-once hand-over (lib/dispatch/group-hand-over.ts, docs/provider.md#sending):
// - sms_messages.open_group_id: the provider group an attempt created, recorded before any message is added to it
//   and cleared when the attempt's outcome is recorded. Set while the message is PENDING means the last attempt's
//   outcome is unknown (a timeout, a crash, a lost lease): whoever holds the message next reads that group back
//   before sending anything, and only recipients the provider never took are sent again.
// A nullable column without a default: no table rewrite.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sms_messages add column open_group_id varchar(64)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sms_messages drop column open_group_id`.execute(db)
}
