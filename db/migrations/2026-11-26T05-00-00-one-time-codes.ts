import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// One-time codes (lib/otp): phone verification, password recovery, and later the SMS second factor.
// - users.phone_verified_at: when the user proved the current phone; a trigger clears it with every change of the
//   phone, whoever writes it (a profile change, the in-process contract, an instance of the previous release during
//   a rolling upgrade), and deletes the user's live codes, which all went to the old number.
// - one_time_codes: one live code per user and purpose, its keyed hash only, and the number it was sent to. A new
//   code replaces the row; a used, expired or guessed-out code is deleted.
// - one_time_code_days: codes sent per user and local day (SVC_TIME_ZONE), for the daily cap.
// - one_time_code_phone_days: codes sent per phone number and local day across every tenant, the brake on SMS
//   pumping (one number behind many accounts of many academies). No tenant_id and so no RLS, by design: it counts
//   across tenants. Its key is an HMAC of the number under the code key, so the table names no number.
// The runtime role reads and upserts the counters; only the minute purge (svc_purge_expired, SECURITY DEFINER)
// deletes their old days.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users add column phone_verified_at timestamptz`.execute(db)

  await sql`
    create table one_time_codes (
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      purpose varchar(20) not null
        constraint one_time_codes_purpose check (purpose in ('PHONE_VERIFICATION', 'PASSWORD_RESET', 'MFA_SMS')),
      code_hash text not null,
      phone varchar(20) not null,
      attempts integer not null default 0,
      expires_at timestamptz not null,
      resend_after timestamptz not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, user_id, purpose),
      foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`select svc_protect_tenant_table('one_time_codes')`.execute(db)
  await sql`revoke truncate, references, trigger on one_time_codes from svc_app`.execute(db)

  await sql`
    create table one_time_code_days (
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      day date not null,
      codes integer not null check (codes >= 0),
      primary key (tenant_id, user_id, day),
      foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`select svc_protect_tenant_table('one_time_code_days')`.execute(db)
  await sql`revoke delete, truncate, references, trigger on one_time_code_days from svc_app`.execute(db)

  await sql`
    create table one_time_code_phone_days (
      phone_key text not null,
      day date not null,
      codes integer not null check (codes >= 0),
      primary key (phone_key, day)
    )`.execute(db)
  await sql`revoke delete, truncate, references, trigger on one_time_code_phone_days from svc_app`.execute(db)

  await defineFunction(db, 'svc_forget_phone_verification')
  await sql`
    create trigger users_phone_changed before update of phone on users
    for each row when (old.phone is distinct from new.phone)
    execute function svc_forget_phone_verification()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_phone_changed on users`.execute(db)
  await sql`drop function svc_forget_phone_verification()`.execute(db)
  await sql`drop table one_time_code_phone_days`.execute(db)
  await sql`drop table one_time_code_days`.execute(db)
  await sql`drop table one_time_codes`.execute(db)
  await sql`alter table users drop column phone_verified_at`.execute(db)
}
