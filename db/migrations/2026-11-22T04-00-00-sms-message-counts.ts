import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// History pages report an exact `total`. Counting a large tenant's messages on every page read the whole tenant's
// index each time; these per-(tenant, sender) counters, kept by statement-level triggers (one upsert per insert
// statement, not per row), answer the unfiltered totals in one indexed read.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table sms_message_counts (
      tenant_id bigint not null references tenants (id),
      sender_id bigint not null,
      messages bigint not null,
      primary key (tenant_id, sender_id)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_message_counts')`.execute(db)
  await sql`
    insert into sms_message_counts (tenant_id, sender_id, messages)
    select tenant_id, sender_id, count(*) from sms_messages group by tenant_id, sender_id`.execute(db)

  // The triggers' functions, from db/functions (db/function-files.ts).
  await defineFunction(db, 'svc_count_inserted_sms')
  await defineFunction(db, 'svc_count_deleted_sms')
  await sql`
    create trigger sms_messages_counted_on_insert after insert on sms_messages
      referencing new table as inserted for each statement execute function svc_count_inserted_sms()`.execute(db)
  await sql`
    create trigger sms_messages_counted_on_delete after delete on sms_messages
      referencing old table as removed for each statement execute function svc_count_deleted_sms()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger sms_messages_counted_on_delete on sms_messages`.execute(db)
  await sql`drop trigger sms_messages_counted_on_insert on sms_messages`.execute(db)
  await sql`drop function svc_count_deleted_sms()`.execute(db)
  await sql`drop function svc_count_inserted_sms()`.execute(db)
  await sql`drop table sms_message_counts`.execute(db)
}
