import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// A stolen session must not move an account's phone (lib/account-security/phone/phone-change.ts, docs/security.md#phone-changes).
// - users.verified_phone_replaced_at: when a verified phone was last replaced; set by the users_phone_changed
//   trigger (svc_forget_phone_verification), whoever writes the phone. For a while after it, password recovery and
//   the SMS second factor send nothing to the new number.
// - sms_messages.kind gains ACCOUNT_NOTICE: the system message that tells a replaced number of the change.
// - phone_verification_days: codes that verify a number, counted per tenant and local day, once for the tenant
//   (counter 'tenant') and once per number (counter = the number's keyed hash). They no longer spend the
//   per-number counter shared by every tenant, which now counts only codes to verified phones.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users add column verified_phone_replaced_at timestamptz`.execute(db)
  await defineFunction(db, 'svc_forget_phone_verification')

  await replaceKindCheck(db, ['STAFF', 'VERIFICATION_CODE', 'ACCOUNT_NOTICE'])

  await sql`
    create table phone_verification_days (
      tenant_id bigint not null references tenants (id),
      counter text not null,
      day date not null,
      codes integer not null check (codes >= 0),
      primary key (tenant_id, counter, day)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('phone_verification_days')`.execute(db)
  await sql`revoke delete, truncate, references, trigger on phone_verification_days from svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table phone_verification_days`.execute(db)
  await sql`delete from sms_messages where kind = 'ACCOUNT_NOTICE'`.execute(db)
  await replaceKindCheck(db, ['STAFF', 'VERIFICATION_CODE'])
  await sql`alter table users drop column verified_phone_replaced_at`.execute(db)
}

/**
 * The kind check of the partitioned sms_messages, replaced on the parent and so on every partition. The legacy
 * partition (attached with a check of its own of the same name) keeps its own copy when the parent's is dropped:
 * dropped there too, then the parent's new check covers it.
 */
async function replaceKindCheck(db: Kysely<any>, kinds: string[]): Promise<void> {
  await sql`alter table sms_messages drop constraint sms_messages_kind`.execute(db)
  await sql`alter table if exists sms_messages_legacy drop constraint if exists sms_messages_kind`.execute(db)
  await sql`alter table sms_messages add constraint sms_messages_kind check (kind in (${sql.join(kinds.map((kind) => sql.lit(kind)))}))`.execute(db)
}
