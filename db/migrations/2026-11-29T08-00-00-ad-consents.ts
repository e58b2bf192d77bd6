import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Consent to advertising, and refusals made at the 080 number (lib/advertising/consents.ts, docs/api.md#advertising).
// - sms_ad_consents: one row per tenant and number that agreed to receive advertisements, with the source and the
//   evidence of the agreement. consented_at is when it was first recorded; confirmed_at when it was last confirmed
//   (recorded again, or the two-year notice handed to the provider). notice_sms_id is the system message carrying
//   the current period's notice while its hand-over is awaited, and notice_for the confirmed_at it was queued for:
//   both set in the transaction that queues it, so no other instance queues it again. Once the notice was handed
//   over, confirmed_at takes that time; once it failed, the consent keeps its confirmed_at and lapses at the end of
//   its life. Withdrawal deletes the row.
// - sms_ad_consents_due serves the notice job's search across tenants (svc_ad_consent_notice_tenants): it leads with
//   confirmed_at because that search is by time over every tenant; the tenant's own reads use the primary key.
// - sms_opt_outs.source: STAFF (added through the API) or PROVIDER_080 (read from the provider's 080 refusal list).
// - sms_advertising_settings.consent_required (default true): an advertisement reaches only numbers with a live consent.
// - sms_messages.no_consent_count and sms_recipients' NO_CONSENT: an advertisement's recipients left out for want
//   of a live consent; like opted_out_count, part of recipient_count, never of estimated_segments or total_price.
// - sms_messages.kind gains CONSENT_NOTICE, the system message of the two-year notice.
// - sms_usage_changes, sms_usage and sms_usage_days: the figures no_consent and consent_notices. Existing rows count 0.
// - sms_opt_out_syncs: per tenant, where the reading of the provider's 080 list stands (the sender number it is read
//   for, the walk in progress and its next page key, the newest refusal seen) and who is reading it (a claim with a
//   lease), so one instance at a time reads a tenant's list and a failed page is read again by the next run.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table sms_ad_consents (
      tenant_id bigint not null references tenants (id),
      phone varchar(20) not null,
      source varchar(10) not null constraint sms_ad_consents_source check (source in ('WRITTEN', 'ORAL', 'ONLINE')),
      evidence varchar(500) not null,
      consented_at timestamptz not null,
      confirmed_at timestamptz not null,
      created_by bigint,
      updated_at timestamptz not null default now(),
      notice_sms_id bigint,
      notice_for timestamptz,
      primary key (tenant_id, phone)
    )`.execute(db)
  await sql`create index sms_ad_consents_recent on sms_ad_consents (tenant_id, consented_at desc, phone desc)`.execute(db)
  await sql`create index sms_ad_consents_due on sms_ad_consents (confirmed_at, tenant_id)`.execute(db)
  await sql`create index sms_ad_consents_noticing on sms_ad_consents (tenant_id) where notice_sms_id is not null`.execute(db)
  await sql`select svc_protect_tenant_table('sms_ad_consents')`.execute(db)
  await sql`revoke truncate, references, trigger on sms_ad_consents from svc_app`.execute(db)

  await sql`
    alter table sms_opt_outs add column source varchar(20) not null default 'STAFF'
      constraint sms_opt_outs_source check (source in ('STAFF', 'PROVIDER_080'))`.execute(db)
  await sql`alter table sms_advertising_settings add column consent_required boolean not null default true`.execute(db)

  await sql`alter table sms_messages add column no_consent_count integer not null default 0`.execute(db)
  await replaceCheck(db, 'sms_messages', 'sms_messages_kind', sql`kind in ('STAFF', 'VERIFICATION_CODE', 'ACCOUNT_NOTICE', 'CONSENT_NOTICE')`)
  await replaceCheck(
    db,
    'sms_recipients',
    'sms_recipients_delivery_status_check',
    sql`delivery_status in ('PENDING', 'DISPATCHED', 'DELIVERED', 'FAILED', 'CANCELLED', 'OPTED_OUT', 'NO_CONSENT')`,
  )
  for (const table of ['sms_usage_changes', 'sms_usage', 'sms_usage_days']) {
    await sql`
      alter table ${sql.table(table)}
        add column no_consent bigint not null default 0,
        add column consent_notices bigint not null default 0`.execute(db)
  }
  // Triggers of their own (db/functions/svc_consent_usage_of_*.sql): the usage triggers' older functions stay as
  // they are, so migrations replayed at their point in history never meet these columns before they exist.
  await defineFunction(db, 'svc_consent_usage_of_inserted_sms')
  await defineFunction(db, 'svc_consent_usage_of_updated_sms')
  await sql`
    create trigger sms_messages_consent_usage_on_insert after insert on sms_messages
      referencing new table as inserted for each statement execute function svc_consent_usage_of_inserted_sms()`.execute(db)
  await sql`
    create trigger sms_messages_consent_usage_on_update after update of status, no_consent_count on sms_messages
      for each row when (
        old.no_consent_count <> new.no_consent_count
        or ((old.status = 'CANCELLED') is distinct from (new.status = 'CANCELLED')
            and (new.no_consent_count > 0 or new.kind = 'CONSENT_NOTICE')))
      execute function svc_consent_usage_of_updated_sms()`.execute(db)

  await sql`
    create table sms_opt_out_syncs (
      tenant_id bigint primary key references tenants (id),
      sender_number varchar(20) not null,
      walk_from timestamptz,
      next_key varchar(200),
      newest_seen timestamptz,
      claim_token uuid,
      claimed_until timestamptz,
      synced_at timestamptz
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_opt_out_syncs')`.execute(db)
  await sql`revoke delete, truncate, references, trigger on sms_opt_out_syncs from svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table sms_opt_out_syncs`.execute(db)
  await sql`drop trigger sms_messages_consent_usage_on_update on sms_messages`.execute(db)
  await sql`drop trigger sms_messages_consent_usage_on_insert on sms_messages`.execute(db)
  await sql`drop function svc_consent_usage_of_updated_sms()`.execute(db)
  await sql`drop function svc_consent_usage_of_inserted_sms()`.execute(db)
  for (const table of ['sms_usage_days', 'sms_usage', 'sms_usage_changes']) {
    await sql`alter table ${sql.table(table)} drop column consent_notices, drop column no_consent`.execute(db)
  }
  await sql`delete from sms_messages where kind = 'CONSENT_NOTICE'`.execute(db)
  await sql`update sms_recipients set delivery_status = 'OPTED_OUT' where delivery_status = 'NO_CONSENT'`.execute(db)
  await replaceCheck(
    db,
    'sms_recipients',
    'sms_recipients_delivery_status_check',
    sql`delivery_status in ('PENDING', 'DISPATCHED', 'DELIVERED', 'FAILED', 'CANCELLED', 'OPTED_OUT')`,
  )
  await replaceCheck(db, 'sms_messages', 'sms_messages_kind', sql`kind in ('STAFF', 'VERIFICATION_CODE', 'ACCOUNT_NOTICE')`)
  await sql`alter table sms_messages drop column no_consent_count`.execute(db)
  await sql`alter table sms_advertising_settings drop column consent_required`.execute(db)
  await sql`alter table sms_opt_outs drop column source`.execute(db)
  await sql`drop table sms_ad_consents`.execute(db)
}

/**
 * A check of a partitioned table (sms_messages, sms_recipients), replaced on the parent and so on every partition.
 * The legacy partition (attached with a check of its own of the same name) keeps its own copy when the parent's is
 * dropped: dropped there too, then the parent's new check covers it.
 */
async function replaceCheck(db: Kysely<any>, table: string, name: string, condition: ReturnType<typeof sql>): Promise<void> {
  await sql`alter table ${sql.table(table)} drop constraint ${sql.id(name)}`.execute(db)
  await sql`alter table if exists ${sql.table(`${table}_legacy`)} drop constraint if exists ${sql.id(name)}`.execute(db)
  await sql`alter table ${sql.table(table)} add constraint ${sql.id(name)} check (${condition})`.execute(db)
}
