import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

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

  await sql`
    create function svc_count_inserted_sms() returns trigger language plpgsql as $$
    begin
      insert into sms_message_counts as c (tenant_id, sender_id, messages)
      select tenant_id, sender_id, count(*) from inserted group by tenant_id, sender_id
      on conflict (tenant_id, sender_id) do update set messages = c.messages + excluded.messages;
      return null;
    end
    $$`.execute(db)
  await sql`
    create function svc_count_deleted_sms() returns trigger language plpgsql as $$
    begin
      update sms_message_counts c set messages = c.messages - d.n
      from (select tenant_id, sender_id, count(*) as n from removed group by tenant_id, sender_id) d
      where c.tenant_id = d.tenant_id and c.sender_id = d.sender_id;
      return null;
    end
    $$`.execute(db)
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
