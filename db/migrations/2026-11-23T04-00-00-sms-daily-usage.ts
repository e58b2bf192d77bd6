import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Per-tenant daily recipient quota. One counter row per tenant and UTC day, raised in the send's own transaction by one
// conditional upsert, so concurrent sends serialise on the row and never overshoot.
// Existing rows: today's counter starts from today's accepted messages (cancelled ones excluded), so a deployment
// in the middle of a day does not hand every tenant a fresh quota.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table sms_daily_usage (
      tenant_id bigint not null references tenants (id),
      day date not null,
      recipients integer not null check (recipients >= 0),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, day)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_daily_usage')`.execute(db)
  await sql`
    insert into sms_daily_usage (tenant_id, day, recipients)
    select tenant_id, (now() at time zone 'UTC')::date, sum(recipient_count)
    from sms_messages
    where created_at >= (now() at time zone 'UTC')::date::timestamp at time zone 'UTC' and status <> 'CANCELLED'
    group by tenant_id`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table sms_daily_usage`.execute(db)
}
