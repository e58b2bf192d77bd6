import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// `npm run sender:pending` lists sender numbers awaiting an operator's decision across tenants. The runtime role sees
// one tenant at a time under RLS; rather than hand the shell the owner's credentials (which can alter the schema and
// switch RLS off), this function answers exactly what scripts/approve-sender.sh needs and nothing else: slug, tenant
// name, number and when it was requested, for PENDING rows only.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function svc_pending_sender_numbers()
    returns table (tenant_slug varchar, tenant_name varchar, sender_number varchar, requested_at timestamptz)
    language sql stable security definer set search_path = public as $$
      select t.slug, t.name, s.sender_number, s.updated_at
      from sms_sender_settings s
      join tenants t on t.id = s.tenant_id
      where s.registration_status = 'PENDING'
      order by s.updated_at, t.slug
    $$`.execute(db)
  await sql`revoke all on function svc_pending_sender_numbers() from public`.execute(db)
  await sql`grant execute on function svc_pending_sender_numbers() to svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function svc_pending_sender_numbers()`.execute(db)
}
