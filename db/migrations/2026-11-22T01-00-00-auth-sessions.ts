import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

export async function up(db: Kysely<any>): Promise<void> {
  // One row per signed-in device category; tokens are referenced by JTI only, never stored raw.
  await sql`
    create table sessions (
      tenant_id bigint not null references tenants (id),
      sid uuid not null,
      user_id bigint not null,
      device_category varchar(10) not null check (device_category in ('WEB', 'MOBILE', 'TABLET', 'DESKTOP')),
      user_agent varchar(512),
      ip_address varchar(64),
      access_jti uuid not null,
      access_expires_at timestamptz not null,
      refresh_jti uuid not null,
      refresh_expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      last_refreshed_at timestamptz,
      primary key (tenant_id, sid),
      unique (tenant_id, user_id, device_category),
      foreign key (tenant_id, user_id) references users (tenant_id, id)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sessions')`.execute(db)

  // Why a removed session ended, so a later refresh with its token can answer precisely (AUTH_016/017/007).
  await sql`
    create table session_revocations (
      tenant_id bigint not null references tenants (id),
      sid uuid not null,
      reason varchar(40) not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, sid)
    )`.execute(db)
  await sql`create index session_revocations_expiry on session_revocations (tenant_id, expires_at)`.execute(db)
  await sql`select svc_protect_tenant_table('session_revocations')`.execute(db)

  // Revoked access-token ids. JTIs are random UUIDs carrying no tenant data, so this table has no tenant_id and
  // no RLS: the check runs in the same statement that binds the tenant, one indexed lookup per request.
  await sql`
    create table revoked_access_tokens (
      jti uuid primary key,
      expires_at timestamptz not null
    )`.execute(db)
  await sql`create index revoked_access_tokens_expiry on revoked_access_tokens (expires_at)`.execute(db)

  // Failed-login counters per (customId or 'root', lower(login id)); shared by every instance.
  await sql`
    create table login_failures (
      scope varchar(30) not null,
      login_id varchar(100) not null,
      failures integer not null default 0,
      locked_until timestamptz,
      updated_at timestamptz not null default now(),
      primary key (scope, login_id)
    )`.execute(db)

  // Fixed-window request counters per client address (login, registration, refresh).
  await sql`
    create table rate_limit_windows (
      key varchar(120) not null,
      window_start timestamptz not null,
      hits integer not null,
      primary key (key, window_start)
    )`.execute(db)

  // Expired rows of every tenant are purged by svc_purge_expired (db/functions).
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['rate_limit_windows', 'login_failures', 'revoked_access_tokens', 'session_revocations', 'sessions']) {
    await sql`drop table ${sql.table(table)}`.execute(db)
  }
}
