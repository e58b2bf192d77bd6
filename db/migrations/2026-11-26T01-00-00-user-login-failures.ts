import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Failed logins of a known user are counted per user, whatever the entry (root entry through the owner directory,
// portal entry by customId) and whatever else proves the password (a password change's current password): one
// counter per user, so two entries cannot give an attacker twice the guesses. login_failures keeps counting only
// the attempts that name no user, so unknown ids still lock as before. Unlogged like login_failures: a crash only
// resets counts. A tenant table under RLS: the login's admission binds the tenant it names before it counts.
// Counts of known users already under the old keys are not carried over; they lapse within a lock period.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create unlogged table user_login_failures (
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      failures integer not null default 0,
      locked_until timestamptz,
      updated_at timestamptz not null default now(),
      primary key (tenant_id, user_id),
      foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`select svc_protect_tenant_table('user_login_failures')`.execute(db)
  // Its outputs change (the user the attempt names, for either entry): it cannot be replaced in place.
  await sql`drop function if exists svc_login_admit(varchar, varchar, integer, integer, varchar, varchar)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists svc_login_admit(varchar, varchar, integer, integer, varchar, varchar)`.execute(db)
  await sql`drop table user_login_failures`.execute(db)
}
