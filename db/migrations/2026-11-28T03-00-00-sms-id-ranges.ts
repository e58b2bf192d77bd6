import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Data lifecycle (docs/architecture.md#data-lifecycle): sms_messages and sms_recipients become tables partitioned by
// message id, one range of ids a month, so retention drops a month instead of deleting its rows.
// - Why by id and not by created_at: every read and write of a message names its id (detail, cancel, dispatch,
//   reports), so each one reaches one partition; the keys stay (tenant_id, id) and (tenant_id, sms_id,
//   recipient_index), which already hold the partition key; recipients need no copy of the message's time.
// - A month's range starts at yyyymm x 10^10 (svc_sms_range_start). The maintenance job creates ranges ahead and, when
//   a month begins, moves the id sequence to its range (svc_prepare_sms_partitions); if that job stops, ids keep
//   coming from the last range opened, so a send never fails for want of a partition.
// - sms_id_ranges remembers when each range was opened: every row of a range got its id before the next range
//   opened, so a range is wholly past retention once a later range was opened before the cutoff.
// - The existing tables become the `legacy` partitions, attached as they are: no row is copied or rewritten, their
//   ids (and so every id a client holds) stay, and their indexes are taken over by the partitioned ones.
// - PostgreSQL 15 allows no identity column on a partitioned table: the id comes from a plain sequence.
// - No foreign key on either partitioned table: one between them would forbid dropping a month of messages while any
//   partition of recipients existed, and the ones to tenants and users would make every attach, detach and drop of a
//   month lock those two tables, which every request reads (dropping a month deadlocked with a send in the scale
//   bench). Recipients are written in their message's transaction and removed with it; a message's tenant and
//   sender come from the signed-in user, and no tenant or user is ever deleted.

/** The indexes of sms_messages as the previous release left them, which both directions rename. */
const MESSAGE_INDEXES = [
  'sms_messages_pkey',
  'sms_messages_history',
  'sms_messages_sender_history',
  'sms_messages_due',
  'sms_messages_dispatched',
  'sms_messages_sent_asc',
  'sms_messages_sent_desc',
  'sms_messages_status',
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const trigger of [
    'sms_messages_counted_on_delete',
    'sms_messages_counted_on_insert',
    'sms_messages_usage_on_insert',
    'sms_messages_usage_on_update',
    'sms_messages_webhook_events',
  ]) {
    await sql`drop trigger ${sql.id(trigger)} on sms_messages`.execute(db)
  }
  await sql`alter table sms_recipients drop constraint sms_recipients_tenant_id_sms_id_fkey`.execute(db)
  await sql`alter table sms_messages drop constraint sms_messages_tenant_id_fkey`.execute(db)
  await sql`alter table sms_messages drop constraint sms_messages_tenant_id_sender_id_fkey`.execute(db)
  await sql`alter table sms_messages alter column id drop identity`.execute(db)
  await sql`alter table sms_messages rename to sms_messages_legacy`.execute(db)
  await sql`alter table sms_recipients rename to sms_recipients_legacy`.execute(db)
  for (const index of MESSAGE_INDEXES) {
    await sql`alter index ${sql.id(index)} rename to ${sql.id(index.replace('sms_messages', 'sms_messages_legacy'))}`.execute(db)
  }
  await sql`alter index sms_recipients_pkey rename to sms_recipients_legacy_pkey`.execute(db)
  // Attaching a partition takes over its indexes that match the partitioned ones, but PostgreSQL 15 matches without
  // the sort order: these two would be taken over crosswise. Dropped, the attach builds them as declared.
  await sql`drop index sms_messages_legacy_sent_asc, sms_messages_legacy_sent_desc`.execute(db)
  // A database migrated down from this release and up again holds ids of month ranges: set aside (the triggers are
  // off, so no total changes), they return to their months below.
  await sql`create temporary table returning_messages on commit drop as select * from sms_messages_legacy where false`.execute(db)
  await sql`create temporary table returning_recipients on commit drop as select * from sms_recipients_legacy where false`.execute(db)
  await sql`
    with moved as (delete from sms_messages_legacy where id >= 2000010000000000 returning *)
    insert into returning_messages select * from moved`.execute(db)
  await sql`
    with moved as (delete from sms_recipients_legacy where sms_id >= 2000010000000000 returning *)
    insert into returning_recipients select * from moved`.execute(db)

  await sql`create sequence sms_messages_id_seq as bigint`.execute(db)
  await sql`grant select, usage on sequence sms_messages_id_seq to svc_app`.execute(db)
  await sql`
    create table sms_messages (like sms_messages_legacy including defaults including constraints)
    partition by range (id)`.execute(db)
  await sql`alter sequence sms_messages_id_seq owned by sms_messages.id`.execute(db)
  await sql`alter table sms_messages alter column id set default nextval('sms_messages_id_seq')`.execute(db)
  await sql`alter table sms_messages add primary key (tenant_id, id)`.execute(db)
  await createIndexes(db)
  // Retention finds expired rows by age across tenants (svc_purge_old_sms): a BRIN index, a few pages a month,
  // costs an insert next to nothing because rows arrive in time order.
  await sql`create index sms_messages_age on sms_messages using brin (created_at)`.execute(db)

  await sql`
    create table sms_recipients (like sms_recipients_legacy including defaults including constraints)
    partition by range (sms_id)`.execute(db)
  await sql`alter table sms_recipients add primary key (tenant_id, sms_id, recipient_index)`.execute(db)

  // Every id the old sequence gave stays in the legacy partition: the ids below the range of January 2000
  // (2000010000000000), far above any id an identity column gave here, and below any month's range, past ones included.
  await sql`
    alter table sms_messages attach partition sms_messages_legacy
    for values from (minvalue) to (2000010000000000)`.execute(db)
  await sql`
    alter table sms_recipients attach partition sms_recipients_legacy
    for values from (minvalue) to (2000010000000000)`.execute(db)
  await sql`select svc_protect_tenant_table('sms_messages')`.execute(db)
  await sql`select svc_protect_tenant_table('sms_recipients')`.execute(db)
  await sql`grant select, insert, update, delete on sms_messages, sms_recipients to svc_app`.execute(db)

  // Not a tenant table: only the owner's maintenance reads it.
  await sql`
    create table sms_id_ranges (
      first_id bigint primary key,
      suffix varchar(20) not null unique,
      opened_at timestamptz
    )`.execute(db)
  await sql`revoke all on sms_id_ranges from svc_app`.execute(db)
  await sql`insert into sms_id_ranges (first_id, suffix, opened_at) values (0, 'legacy', '-infinity')`.execute(db)
  await defineFunction(db, 'svc_sms_range_start')
  await defineFunction(db, 'svc_prepare_sms_partitions')
  await sql`select svc_prepare_sms_partitions(2)`.execute(db)

  // The rows set aside go back into their months' ranges (opened at the month's start), before the triggers exist:
  // they were counted when first written. The sequence goes past the highest of them.
  await sql`
    select svc_prepare_sms_partitions(0, make_date((m / 100)::int, (m % 100)::int, 1)::timestamptz)
    from (select distinct id / 10000000000 as m from returning_messages) months`.execute(db)
  await sql`insert into sms_messages select * from returning_messages`.execute(db)
  await sql`insert into sms_recipients select * from returning_recipients`.execute(db)
  await sql`
    select setval('sms_messages_id_seq', max(id) + 1, false) from returning_messages
    having max(id) + 1 > (select case when is_called then last_value + 1 else last_value end from sms_messages_id_seq)`.execute(db)

  await defineFunction(db, 'svc_count_inserted_sms')
  await defineFunction(db, 'svc_count_deleted_sms')
  await defineFunction(db, 'svc_usage_of_inserted_sms')
  await defineFunction(db, 'svc_usage_of_updated_sms')
  await defineFunction(db, 'svc_webhook_event_of_sms')
  await createTriggers(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  // Back to plain tables: every partition's rows are copied into them (an id from a month's range stays as it is).
  await sql`alter table sms_messages rename to sms_messages_partitioned`.execute(db)
  await sql`alter table sms_recipients rename to sms_recipients_partitioned`.execute(db)
  for (const index of [...MESSAGE_INDEXES, 'sms_recipients_pkey']) {
    await sql`alter index ${sql.id(index)} rename to ${sql.id(`${index}_partitioned`)}`.execute(db)
  }
  await sql`create table sms_messages (like sms_messages_partitioned including defaults including constraints)`.execute(db)
  await sql`create table sms_recipients (like sms_recipients_partitioned including defaults including constraints)`.execute(db)
  await sql`alter table sms_messages alter column id drop default`.execute(db)
  await sql`insert into sms_messages select * from sms_messages_partitioned`.execute(db)
  await sql`insert into sms_recipients select * from sms_recipients_partitioned`.execute(db)
  await sql`drop table sms_messages_partitioned, sms_recipients_partitioned, sms_id_ranges`.execute(db)
  await sql`drop function if exists svc_prepare_sms_partitions(integer, timestamptz)`.execute(db)
  await sql`
    alter table sms_messages alter column id add generated always as identity`.execute(db)
  await sql`select setval(pg_get_serial_sequence('sms_messages', 'id'), coalesce((select max(id) from sms_messages), 0) + 1, false)`.execute(db)
  await sql`alter table sms_messages add primary key (tenant_id, id)`.execute(db)
  await sql`alter table sms_messages add foreign key (tenant_id) references tenants (id)`.execute(db)
  await sql`alter table sms_messages add foreign key (tenant_id, sender_id) references users (tenant_id, id)`.execute(db)
  await sql`alter table sms_recipients add primary key (tenant_id, sms_id, recipient_index)`.execute(db)
  await sql`
    alter table sms_recipients add foreign key (tenant_id, sms_id) references sms_messages (tenant_id, id) on delete cascade`.execute(db)
  await createIndexes(db)
  await sql`select svc_protect_tenant_table('sms_messages')`.execute(db)
  await sql`select svc_protect_tenant_table('sms_recipients')`.execute(db)
  await sql`grant select, insert, update, delete on sms_messages, sms_recipients to svc_app`.execute(db)
  await sql`grant select, usage on sequence sms_messages_id_seq to svc_app`.execute(db)
  await createTriggers(db)
}

// The indexes and triggers of sms_messages as they were before this migration, on whichever table now bears the name.
async function createIndexes(db: Kysely<any>): Promise<void> {
  await sql`create index sms_messages_history on sms_messages (tenant_id, created_at desc, id desc)`.execute(db)
  await sql`create index sms_messages_sender_history on sms_messages (tenant_id, sender_id, created_at desc, id desc)`.execute(db)
  await sql`create index sms_messages_due on sms_messages (tenant_id, next_attempt_at) where status = 'PENDING'`.execute(db)
  await sql`create index sms_messages_dispatched on sms_messages (tenant_id) where status = 'DISPATCHED'`.execute(db)
  await sql`create index sms_messages_sent_asc on sms_messages (tenant_id, sent_at, id)`.execute(db)
  await sql`create index sms_messages_sent_desc on sms_messages (tenant_id, sent_at desc nulls last, id desc)`.execute(db)
  await sql`create index sms_messages_status on sms_messages (tenant_id, status, id)`.execute(db)
}

async function createTriggers(db: Kysely<any>): Promise<void> {
  await sql`
    create trigger sms_messages_counted_on_insert after insert on sms_messages
      referencing new table as inserted for each statement execute function svc_count_inserted_sms()`.execute(db)
  await sql`
    create trigger sms_messages_counted_on_delete after delete on sms_messages
      referencing old table as removed for each statement execute function svc_count_deleted_sms()`.execute(db)
  await sql`
    create trigger sms_messages_usage_on_insert after insert on sms_messages
      referencing new table as inserted for each statement execute function svc_usage_of_inserted_sms()`.execute(db)
  await sql`
    create trigger sms_messages_usage_on_update after update of status, success_count, fail_count, opted_out_count on sms_messages
      for each row when (
        (old.status = 'CANCELLED') is distinct from (new.status = 'CANCELLED')
        or old.success_count <> new.success_count or old.fail_count <> new.fail_count
        or old.opted_out_count <> new.opted_out_count)
      execute function svc_usage_of_updated_sms()`.execute(db)
  await sql`
    create trigger sms_messages_webhook_events after update of status on sms_messages
      for each row when (
        old.status is distinct from new.status and new.kind = 'STAFF'
        and new.status in ('SENT', 'FAILED', 'PARTIAL', 'CANCELLED'))
      execute function svc_webhook_event_of_sms()`.execute(db)
}
