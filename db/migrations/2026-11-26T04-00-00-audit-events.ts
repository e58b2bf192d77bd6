import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants. Retention: db/functions/svc_purge_audit_events.sql.

// The academy's audit log: who did what, written by the transaction of the change it records, so a rolled-back
// change leaves no event and a committed one never lacks its event. Append-only for the runtime role: it may insert
// and read (under RLS, its own tenant's), never update or delete; only the retention function, SECURITY DEFINER and
// owned by the owner, removes events, and only by age. actor_id has no foreign key: an event outlives the user who
// acted (USER_DELETED names the user it removed).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table audit_events (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      type varchar(40) not null,
      occurred_at timestamptz not null default now(),
      actor_id bigint,
      target_type varchar(30),
      target_id varchar(64),
      ip_address varchar(64),
      request_id varchar(128),
      details jsonb not null default '{}',
      primary key (tenant_id, id)
    )`.execute(db)
  // Newest first, whole log or one type; the actor filter reads the first index and filters.
  await sql`create index audit_events_recent on audit_events (tenant_id, occurred_at desc, id desc)`.execute(db)
  await sql`create index audit_events_by_type on audit_events (tenant_id, type, occurred_at desc, id desc)`.execute(db)
  await sql`select svc_protect_tenant_table('audit_events')`.execute(db)
  await sql`revoke update, delete, truncate, references, trigger on audit_events from svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table audit_events`.execute(db)
}
