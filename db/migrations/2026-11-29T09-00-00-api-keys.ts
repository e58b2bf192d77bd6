import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Integrator API keys (docs/api.md#api-keys): a tenant's own servers call the service as the OWNER or MANAGER who
// created the key, within the key's scopes.
// - api_keys: one row per key, under RLS. key_hash is the SHA-256 of the whole key; the key itself is never stored.
//   lookup_id is the part of the key that finds it (not enough to use it); prefix is what the list shows.
// - api_key_directory: lookup_id -> (tenant_id, api_key_id), without RLS, because a key arrives before any tenant is
//   known (like owner_directory). The runtime role may not read or write it: a SECURITY DEFINER trigger on api_keys
//   fills it, and svc_api_key_directory answers one lookup id with ids only.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table api_keys (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      lookup_id varchar(32) not null,
      name varchar(100) not null,
      scopes text[] not null check (cardinality(scopes) > 0),
      prefix varchar(20) not null,
      key_hash bytea not null,
      created_by bigint not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz,
      primary key (tenant_id, id),
      foreign key (tenant_id, created_by) references users (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`create index api_keys_recent on api_keys (tenant_id, created_at desc, id desc)`.execute(db)
  await sql`select svc_protect_tenant_table('api_keys')`.execute(db)
  await sql`revoke truncate, references, trigger on api_keys from svc_app`.execute(db)

  await sql`
    create table api_key_directory (
      lookup_id varchar(32) primary key,
      tenant_id bigint not null,
      api_key_id bigint not null,
      foreign key (tenant_id, api_key_id) references api_keys (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`revoke all on api_key_directory from svc_app`.execute(db)
  await defineFunction(db, 'svc_enter_api_key')
  await sql`
    create trigger api_keys_enter_directory after insert on api_keys
    for each row execute function svc_enter_api_key()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table api_key_directory`.execute(db)
  await sql`drop table api_keys`.execute(db)
  await sql`drop function svc_enter_api_key()`.execute(db)
}
