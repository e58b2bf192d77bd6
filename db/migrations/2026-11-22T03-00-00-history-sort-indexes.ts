import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// History sorts by sentAt (unsent last) and by status read a whole tenant without these.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index sms_messages_sent_desc on sms_messages (tenant_id, sent_at desc nulls last, id desc)`.execute(db)
  await sql`create index sms_messages_sent_asc on sms_messages (tenant_id, sent_at asc nulls last, id asc)`.execute(db)
  await sql`create index sms_messages_status on sms_messages (tenant_id, status, id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index sms_messages_status`.execute(db)
  await sql`drop index sms_messages_sent_asc`.execute(db)
  await sql`drop index sms_messages_sent_desc`.execute(db)
}
