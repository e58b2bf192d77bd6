import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Usage of KakaoTalk notices (docs/api.md#usage): recipients delivered over AlimTalk, and those delivered by the
// SMS or LMS fallback after AlimTalk failed.
// - sms_messages.alimtalk_count and fallback_count: kept by the delivery reports (lib/dispatch/delivery/apply-reports.ts)
//   beside success_count, which they are part of; the update trigger journals them like the other counts. A message
//   is inserted before any report, with both at 0, so the insert trigger's function needs neither (and, unchanged,
//   still runs when older migrations are replayed with the current function files).
// - sms_usage_changes, sms_usage and sms_usage_days: the figures alimtalk and fallbacks (svc_roll_up_sms_usage names
//   them). Existing rows count 0: nothing was sent over AlimTalk before this release.
// - The update trigger also follows total_price, which a fallback's re-pricing changes.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table sms_messages
      add column alimtalk_count integer not null default 0,
      add column fallback_count integer not null default 0`.execute(db)
  for (const table of ['sms_usage_changes', 'sms_usage', 'sms_usage_days']) {
    await sql`
      alter table ${sql.table(table)}
        add column alimtalk bigint not null default 0,
        add column fallbacks bigint not null default 0`.execute(db)
  }
  await defineFunction(db, 'svc_usage_of_updated_sms')
  await sql`drop trigger sms_messages_usage_on_update on sms_messages`.execute(db)
  await sql`
    create trigger sms_messages_usage_on_update
      after update of status, success_count, fail_count, opted_out_count, alimtalk_count, fallback_count, total_price
      on sms_messages
      for each row when (
        (old.status = 'CANCELLED') is distinct from (new.status = 'CANCELLED')
        or old.success_count <> new.success_count or old.fail_count <> new.fail_count
        or old.opted_out_count <> new.opted_out_count
        or old.alimtalk_count <> new.alimtalk_count or old.fallback_count <> new.fallback_count
        or old.total_price <> new.total_price)
      execute function svc_usage_of_updated_sms()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger sms_messages_usage_on_update on sms_messages`.execute(db)
  await sql`
    create trigger sms_messages_usage_on_update after update of status, success_count, fail_count, opted_out_count on sms_messages
      for each row when (
        (old.status = 'CANCELLED') is distinct from (new.status = 'CANCELLED')
        or old.success_count <> new.success_count or old.fail_count <> new.fail_count
        or old.opted_out_count <> new.opted_out_count)
      execute function svc_usage_of_updated_sms()`.execute(db)
  for (const table of ['sms_usage_days', 'sms_usage', 'sms_usage_changes']) {
    await sql`alter table ${sql.table(table)} drop column fallbacks, drop column alimtalk`.execute(db)
  }
  await sql`alter table sms_messages drop column fallback_count, drop column alimtalk_count`.execute(db)
}
