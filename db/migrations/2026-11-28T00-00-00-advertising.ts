import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Advertising messages (lib/advertising/advertising.ts, docs/api.md#advertising).
// - sms_messages.purpose: INFORMATIONAL or ADVERTISEMENT. An advertisement keeps, from its acceptance, the name and
//   the opt-out number its text is framed with (ad_sender_name, ad_opt_out_number): the size and price the 201
//   answered are those of the text the provider gets, even if the settings change before a scheduled send.
// - opted_out_count: recipients left out because their number is on the tenant's opt-out list, at acceptance or
//   at a later hand-over. They are part of recipient_count, never of estimated_segments or total_price.
// - sms_recipients.delivery_status gains OPTED_OUT (final; never sent, never priced).
// - sms_opt_outs: the tenant's opt-out list, one row per normalised number; its primary key is the index a send's
//   set-based lookup of all its numbers uses, and sms_opt_outs_recent serves the newest-first list.
// - sms_advertising_settings: at most one row per tenant, its opt-out (080) number.
export async function up(db: Kysely<any>): Promise<void> {
  // Constant defaults: PostgreSQL 11+ adds these without rewriting the table.
  await sql`
    alter table sms_messages
      add column purpose varchar(20) not null default 'INFORMATIONAL'
        constraint sms_messages_purpose check (purpose in ('INFORMATIONAL', 'ADVERTISEMENT')),
      add column ad_sender_name varchar(100),
      add column ad_opt_out_number varchar(20),
      add column opted_out_count integer not null default 0,
      add constraint sms_messages_advertisement_frame
        check ((purpose = 'ADVERTISEMENT') = (ad_sender_name is not null and ad_opt_out_number is not null))`.execute(db)

  // NOT VALID then VALIDATE: the check is in force for new rows at once, and the scan of existing ones takes only
  // a SHARE UPDATE EXCLUSIVE lock, so sends and dispatch go on while a large table is checked.
  await sql`alter table sms_recipients drop constraint sms_recipients_delivery_status_check`.execute(db)
  await sql`
    alter table sms_recipients add constraint sms_recipients_delivery_status_check
      check (delivery_status in ('PENDING', 'DISPATCHED', 'DELIVERED', 'FAILED', 'CANCELLED', 'OPTED_OUT')) not valid`.execute(db)
  await sql`alter table sms_recipients validate constraint sms_recipients_delivery_status_check`.execute(db)

  await sql`
    create table sms_opt_outs (
      tenant_id bigint not null references tenants (id),
      phone varchar(20) not null,
      created_by bigint,
      created_at timestamptz not null default now(),
      primary key (tenant_id, phone)
    )`.execute(db)
  await sql`create index sms_opt_outs_recent on sms_opt_outs (tenant_id, created_at desc, phone desc)`.execute(db)
  await sql`select svc_protect_tenant_table('sms_opt_outs')`.execute(db)
  await sql`revoke update, truncate, references, trigger on sms_opt_outs from svc_app`.execute(db)

  await sql`
    create table sms_advertising_settings (
      tenant_id bigint primary key references tenants (id),
      opt_out_number varchar(20),
      updated_by bigint,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_advertising_settings')`.execute(db)
  await sql`revoke truncate, references, trigger on sms_advertising_settings from svc_app`.execute(db)

  // The usage journal also follows opted_out_count, which a hand-over raises when a number joined the list after
  // acceptance (estimated_segments and total_price fall with it). The function (db/functions) reads the column.
  await sql`drop trigger sms_messages_usage_on_update on sms_messages`.execute(db)
  await sql`
    create trigger sms_messages_usage_on_update
      after update of status, success_count, fail_count, opted_out_count on sms_messages
      for each row
      when ((old.status = 'CANCELLED') is distinct from (new.status = 'CANCELLED')
            or old.success_count <> new.success_count or old.fail_count <> new.fail_count
            or old.opted_out_count <> new.opted_out_count)
      execute function svc_usage_of_updated_sms()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger sms_messages_usage_on_update on sms_messages`.execute(db)
  await sql`
    create trigger sms_messages_usage_on_update after update of status, success_count, fail_count on sms_messages
      for each row
      when ((old.status = 'CANCELLED') is distinct from (new.status = 'CANCELLED')
            or old.success_count <> new.success_count or old.fail_count <> new.fail_count)
      execute function svc_usage_of_updated_sms()`.execute(db)
  await sql`drop table sms_advertising_settings`.execute(db)
  await sql`drop table sms_opt_outs`.execute(db)
  await sql`alter table sms_recipients drop constraint sms_recipients_delivery_status_check`.execute(db)
  await sql`
    alter table sms_recipients add constraint sms_recipients_delivery_status_check
      check (delivery_status in ('PENDING', 'DISPATCHED', 'DELIVERED', 'FAILED', 'CANCELLED'))`.execute(db)
  await sql`
    alter table sms_messages drop constraint sms_messages_advertisement_frame, drop column opted_out_count,
      drop column ad_opt_out_number, drop column ad_sender_name, drop column purpose`.execute(db)
}
