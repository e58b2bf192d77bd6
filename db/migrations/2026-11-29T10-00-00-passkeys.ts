import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Passkeys (WebAuthn, docs/api.md#passkeys): sign-in with a credential the user's device keeps.
// - passkeys: a user's credentials (at most 10, checked by the enrolment under the user's row lock). credential_id
//   is the authenticator's id (base64url, at most 1023 bytes), public_key its COSE key, counter the last signature
//   counter seen. Removed with the user (a hard delete) and by the in-process contract's deleteUser.
// - passkey_directory: credential id -> (tenant, user), read before any tenant is known (a discoverable credential
//   names no user or tenant), so no RLS, like owner_directory. The runtime role has no privilege on it: a SECURITY
//   DEFINER trigger on passkeys writes it in the transaction that adds or removes the passkey, and a SECURITY
//   DEFINER function (svc_find_passkey_owner) reads one entry, ids only. Its primary key makes a credential id
//   belong to one user across every tenant.
// - passkey_enrolment_challenges: the live creation challenge of a user (one; a new one replaces it), as SHA-256.
// - passkey_sign_in_challenges: request challenges, before any tenant or user is known: no tenant_id, no RLS, only
//   the challenge's SHA-256 and its expiry under a random id. Both kinds are deleted when used, and by the minute
//   purge once expired.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table passkeys (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      user_id bigint not null,
      credential_id varchar(1400) not null,
      public_key bytea not null,
      counter bigint not null default 0,
      transports text[] not null default '{}',
      backed_up boolean not null default false,
      name varchar(64) not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      primary key (tenant_id, id),
      constraint passkeys_credential unique (tenant_id, credential_id),
      foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`create index passkeys_user on passkeys (tenant_id, user_id, created_at)`.execute(db)
  await sql`select svc_protect_tenant_table('passkeys')`.execute(db)
  await sql`revoke truncate, references, trigger on passkeys from svc_app`.execute(db)

  await sql`
    create table passkey_directory (
      credential_id varchar(1400) primary key,
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index passkey_directory_user on passkey_directory (tenant_id, user_id)`.execute(db)
  await sql`revoke all on passkey_directory from svc_app`.execute(db)
  await defineFunction(db, 'svc_sync_passkey_directory')
  await defineFunction(db, 'svc_find_passkey_owner')
  await sql`
    create trigger passkeys_sync_directory after insert or delete on passkeys
    for each row execute function svc_sync_passkey_directory()`.execute(db)

  await sql`
    create table passkey_enrolment_challenges (
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      challenge_hash text not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, user_id),
      foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`select svc_protect_tenant_table('passkey_enrolment_challenges')`.execute(db)
  await sql`revoke truncate, references, trigger on passkey_enrolment_challenges from svc_app`.execute(db)

  await sql`
    create table passkey_sign_in_challenges (
      id uuid primary key,
      challenge_hash text not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`revoke update, truncate, references, trigger on passkey_sign_in_challenges from svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table passkey_sign_in_challenges`.execute(db)
  await sql`drop table passkey_enrolment_challenges`.execute(db)
  await sql`drop trigger passkeys_sync_directory on passkeys`.execute(db)
  await sql`drop function svc_find_passkey_owner(text)`.execute(db)
  await sql`drop function svc_sync_passkey_directory()`.execute(db)
  await sql`drop table passkey_directory`.execute(db)
  await sql`drop table passkeys`.execute(db)
}
