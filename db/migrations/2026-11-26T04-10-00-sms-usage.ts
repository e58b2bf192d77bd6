import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// The usage report (GET /v1/sms/usage) reads pre-aggregated totals, never sms_messages or sms_recipients: a year of
// a busy tenant stays one indexed range read, and retention may delete old messages without changing usage (no
// delete trigger, on purpose).
// - sms_usage: totals per tenant and 15-minute UTC bucket of acceptance (created_at). Every UTC offset in use is a
//   multiple of 15 minutes, so no bucket straddles a local midnight in any zone: the report's local days can be read
//   in SVC_TIME_ZONE whatever it is, and stay right if it changes later.
// - sms_usage_days: the same totals per tenant and local day of one zone, the zone named in sms_usage_zones. A year
//   is then at most 366 rows to sum instead of up to 35,040 buckets. The minute roll-up keeps the days with the
//   buckets and rebuilds them from the buckets when it runs under another zone; a report reads the days only when
//   they are of its zone, else the buckets, so it is exact either way.
// - sms_usage_changes: an append-only journal of deltas written by triggers on sms_messages. A send, a dispatch or a
//   delivery report only inserts here, never locks a shared counter row, so none of them waits on another; the
//   minute roll-up (svc_roll_up_sms_usage) moves the deltas into sms_usage and sms_usage_days, and reports read
//   the journal too.
// The runtime role reads all four and inserts deltas (through the triggers, in its own transactions); only the
// roll-up, SECURITY DEFINER, writes sms_usage, sms_usage_days or sms_usage_zones or deletes deltas.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table sms_usage (
      tenant_id bigint not null references tenants (id),
      bucket timestamptz not null,
      messages bigint not null default 0,
      recipients bigint not null default 0,
      sms bigint not null default 0,
      lms bigint not null default 0,
      segments bigint not null default 0,
      estimated_cost bigint not null default 0,
      delivered bigint not null default 0,
      failed bigint not null default 0,
      opted_out bigint not null default 0,
      verification_codes bigint not null default 0,
      primary key (tenant_id, bucket)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_usage')`.execute(db)
  await sql`revoke insert, update, delete, truncate, references, trigger on sms_usage from svc_app`.execute(db)

  await sql`
    create table sms_usage_days (
      tenant_id bigint not null references tenants (id),
      time_zone varchar(64) not null,
      day date not null,
      messages bigint not null default 0,
      recipients bigint not null default 0,
      sms bigint not null default 0,
      lms bigint not null default 0,
      segments bigint not null default 0,
      estimated_cost bigint not null default 0,
      delivered bigint not null default 0,
      failed bigint not null default 0,
      opted_out bigint not null default 0,
      verification_codes bigint not null default 0,
      primary key (tenant_id, time_zone, day)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_usage_days')`.execute(db)
  await sql`revoke insert, update, delete, truncate, references, trigger on sms_usage_days from svc_app`.execute(db)

  // At most one row: the zone sms_usage_days is built for. It names no tenant and holds nothing of one, so it needs
  // no RLS; the runtime role only reads it. Empty until the first roll-up, which builds the days in its zone (a
  // migration cannot know SVC_TIME_ZONE): until then reports read the buckets.
  await sql`
    create table sms_usage_zones (
      time_zone varchar(64) primary key,
      ready_at timestamptz not null default now()
    )`.execute(db)
  await sql`revoke insert, update, delete, truncate, references, trigger on sms_usage_zones from svc_app`.execute(db)

  await sql`
    create table sms_usage_changes (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      bucket timestamptz not null,
      messages bigint not null default 0,
      recipients bigint not null default 0,
      sms bigint not null default 0,
      lms bigint not null default 0,
      segments bigint not null default 0,
      estimated_cost bigint not null default 0,
      delivered bigint not null default 0,
      failed bigint not null default 0,
      opted_out bigint not null default 0,
      verification_codes bigint not null default 0,
      -- Its only index: a report reads its tenant's few pending deltas through it, and a send pays for no other.
      primary key (tenant_id, id)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_usage_changes')`.execute(db)
  await sql`revoke update, delete, truncate, references, trigger on sms_usage_changes from svc_app`.execute(db)

  // The triggers' functions, from db/functions (db/function-files.ts).
  await defineFunction(db, 'svc_usage_of_inserted_sms')
  await defineFunction(db, 'svc_usage_of_updated_sms')
  // Created before the backfill: creating a trigger waits for the sends in flight and holds new ones until the
  // migration commits, so every message is counted exactly once, by the backfill or by a trigger.
  await sql`
    create trigger sms_messages_usage_on_insert after insert on sms_messages
      referencing new table as inserted for each statement execute function svc_usage_of_inserted_sms()`.execute(db)
  // Only a change that moves a figure: delivery counts, or entering or leaving CANCELLED (other status moves count
  // the same before and after).
  await sql`
    create trigger sms_messages_usage_on_update after update of status, success_count, fail_count on sms_messages
      for each row
      when ((old.status = 'CANCELLED') is distinct from (new.status = 'CANCELLED')
            or old.success_count <> new.success_count or old.fail_count <> new.fail_count)
      execute function svc_usage_of_updated_sms()`.execute(db)

  await sql`
    insert into sms_usage (tenant_id, bucket, messages, recipients, sms, lms, segments, estimated_cost, delivered,
                           failed, opted_out, verification_codes)
    select tenant_id, date_bin('15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'),
           count(*), sum(recipient_count), count(*) filter (where message_type = 'SMS'),
           count(*) filter (where message_type = 'LMS'), sum(estimated_segments), sum(total_price), sum(success_count),
           sum(fail_count), 0, count(*) filter (where kind = 'VERIFICATION_CODE')
    from sms_messages
    where status <> 'CANCELLED'
    group by 1, 2`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger sms_messages_usage_on_update on sms_messages`.execute(db)
  await sql`drop trigger sms_messages_usage_on_insert on sms_messages`.execute(db)
  await sql`drop function svc_usage_of_updated_sms()`.execute(db)
  await sql`drop function svc_usage_of_inserted_sms()`.execute(db)
  await sql`drop function if exists svc_roll_up_sms_usage(text)`.execute(db)
  await sql`drop table sms_usage_changes`.execute(db)
  await sql`drop table sms_usage_zones`.execute(db)
  await sql`drop table sms_usage_days`.execute(db)
  await sql`drop table sms_usage`.execute(db)
}
