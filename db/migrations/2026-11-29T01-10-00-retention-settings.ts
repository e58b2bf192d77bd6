import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants (the purges: db/functions).

// The retention the purges apply was an argument of the SECURITY DEFINER purge functions, which the runtime role may
// call: any runtime statement could pass one day and erase every tenant's audit log and SMS history. The retention
// is now this one row, which only the owner writes (with every migration run, from SVC_AUDIT_RETENTION_DAYS and
// SVC_SMS_RETENTION_DAYS), and the functions read it. No tenant_id, so no RLS: it is the deployment's, not a
// tenant's. The runtime role may read it (which retention is in force is no secret), never change it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table retention_settings (
      id boolean primary key default true check (id),
      audit_days integer not null check (audit_days between 0 and 36500),
      sms_days integer not null check (sms_days between 0 and 36500),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`insert into retention_settings (audit_days, sms_days) values (400, 400)`.execute(db)
  await sql`revoke all on retention_settings from svc_app`.execute(db)
  await sql`grant select on retention_settings to svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table retention_settings`.execute(db)
}
