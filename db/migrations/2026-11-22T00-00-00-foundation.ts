import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

export async function up(db: Kysely<any>): Promise<void> {
  // The runtime role: owns nothing, is not superuser and cannot bypass RLS. The migrating (owner) user must be
  // able to switch to it, so it is granted membership when it is not a superuser already.
  await sql`
    do $$
    begin
      if not exists (select 1 from pg_roles where rolname = 'svc_app') then
        begin
          create role svc_app nologin nosuperuser nobypassrls noinherit;
        exception when duplicate_object or unique_violation then
          null; -- another migrator created it at the same moment
        end;
      end if;
      if not (select rolsuper from pg_roles where rolname = current_user) then
        execute format('grant svc_app to %I', current_user);
      end if;
    end
    $$`.execute(db)
  await sql`grant usage on schema public to svc_app`.execute(db)
  // Every table and sequence this owner creates from now on is usable (not owned) by the runtime role.
  await sql`alter default privileges in schema public grant select, insert, update, delete on tables to svc_app`.execute(db)
  await sql`alter default privileges in schema public grant usage, select on sequences to svc_app`.execute(db)

  // Every later migration protects its tenant tables with this one function, so the policy text is written once.
  // Functions are defined by their files in db/functions, not copied here (db/function-files.ts).
  await defineFunction(db, 'svc_protect_tenant_table')

  await sql`
    create table tenants (
      id bigint generated always as identity primary key,
      slug varchar(63) not null unique check (slug ~ '^[a-z0-9][a-z0-9-]*$'),
      custom_id varchar(20) not null unique,
      custom_domain varchar(255) unique,
      name varchar(100) not null,
      business_registration_number char(10) unique check (business_registration_number ~ '^[0-9]{10}$'),
      status varchar(20) not null default 'ACTIVE' check (status in ('ACTIVE', 'SUSPENDED', 'CLOSED')),
      onboarding_completed_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)

  await sql`
    create table users (
      id bigint generated always as identity,
      tenant_id bigint not null references tenants (id),
      user_login_id varchar(50) not null,
      password_hash varchar(100) not null,
      name varchar(100) not null,
      phone varchar(20),
      role varchar(20) not null check (role in ('OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT')),
      status varchar(20) not null default 'ACTIVE' check (status in ('ACTIVE', 'SUSPENDED', 'DELETED')),
      avatar_seed varchar(64) not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, id),
      unique (tenant_id, user_login_id)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('users')`.execute(db)

  // Read before any tenant context exists, so it has no RLS; it holds ids only, never credentials.
  await sql`
    create table owner_directory (
      user_login_id varchar(50) primary key,
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      created_at timestamptz not null default now(),
      foreign key (tenant_id, user_id) references users (tenant_id, id)
    )`.execute(db)
  await sql`create index owner_directory_tenant_user on owner_directory (tenant_id, user_id)`.execute(db)

  // Upgraded databases may carry the legacy social-login column; the service never writes it, so it must not
  // block inserts.
  await sql`
    do $$
    begin
      if exists (select 1 from information_schema.columns
                 where table_schema = current_schema() and table_name = 'users' and column_name = 'oauth_provider') then
        alter table users alter column oauth_provider drop not null;
      end if;
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table owner_directory`.execute(db)
  await sql`drop table users`.execute(db)
  await sql`drop table tenants`.execute(db)
  await sql`drop function svc_protect_tenant_table(regclass)`.execute(db)
}
