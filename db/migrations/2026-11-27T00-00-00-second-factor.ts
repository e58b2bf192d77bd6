import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// The second factor at sign-in (lib/mfa).
// - user_second_factors: one row per user with a factor or an enrolment under way. The TOTP secret is sealed
//   (AES-256-GCM under a key of the service, bound to tenant and user), never stored in clear: a hash cannot serve,
//   since codes are computed from the secret. A pending secret waits for its first code before it counts, and is
//   discarded after a few wrong ones (a stolen session cannot guess its way to an enrolment and its recovery codes);
//   the last accepted time step keeps each step to one use. The SMS factor is a timestamp: it uses the verified phone.
// - user_recovery_codes: the live recovery codes, a keyed hash each; a used code is deleted.
// - mfa_challenges: the login attempts whose password was right and whose second step is still to come; the cookie
//   holds the token, the row its SHA-256 only, so a stolen row opens nothing. Deleted by the step that uses it, or
//   by the minute purge once expired (a few minutes' worth of logins: no index on the expiry for that), and by a
//   trigger on users when the password that started it changes.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table user_second_factors (
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      totp_secret text,
      totp_enabled_at timestamptz,
      totp_last_step bigint,
      totp_pending_secret text,
      totp_pending_attempts integer not null default 0,
      sms_enabled_at timestamptz,
      updated_at timestamptz not null default now(),
      primary key (tenant_id, user_id),
      foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade,
      constraint user_second_factors_totp check ((totp_secret is null) = (totp_enabled_at is null))
    )`.execute(db)
  await sql`select svc_protect_tenant_table('user_second_factors')`.execute(db)
  await sql`revoke truncate, references, trigger on user_second_factors from svc_app`.execute(db)

  await sql`
    create table user_recovery_codes (
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      code_hash text not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, user_id, code_hash),
      foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`select svc_protect_tenant_table('user_recovery_codes')`.execute(db)
  await sql`revoke update, truncate, references, trigger on user_recovery_codes from svc_app`.execute(db)

  await sql`
    create table mfa_challenges (
      tenant_id bigint not null references tenants (id),
      token_hash text not null,
      user_id bigint not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, token_hash),
      foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
    )`.execute(db)
  // The user's challenges go at once when the password changes (the trigger below) or the user is deleted.
  await sql`create index mfa_challenges_user on mfa_challenges (tenant_id, user_id)`.execute(db)
  await sql`select svc_protect_tenant_table('mfa_challenges')`.execute(db)
  // UPDATE stays: the second step locks its challenge (select ... for update needs it).
  await sql`revoke truncate, references, trigger on mfa_challenges from svc_app`.execute(db)

  await defineFunction(db, 'svc_forget_mfa_challenges')
  await sql`
    create trigger users_password_changed after update of password_hash on users
    for each row when (old.password_hash is distinct from new.password_hash)
    execute function svc_forget_mfa_challenges()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_password_changed on users`.execute(db)
  await sql`drop function svc_forget_mfa_challenges()`.execute(db)
  await sql`drop table mfa_challenges`.execute(db)
  await sql`drop table user_recovery_codes`.execute(db)
  await sql`drop table user_second_factors`.execute(db)
}
