import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Login ids that differ only in case or Unicode form (`demo-student-4` / `Demo-Student-4`, fullwidth letters) were
// separate accounts. Every users row and owner-directory entry now stores its login key: NFKC, case folded, computed
// by the service (PostgreSQL has no NFKC case fold; lib/tenancy/identifiers.ts loginIdKey, copied below as of today)
// and unique per scope (tenant for users, global for owners). Writers that do not set it (an operator's insert) get
// it from a trigger for printable-ASCII ids, where the fold is plain lower-casing; any other id must come with its key.
//
// Existing look-alike pairs are kept, not renamed or merged: the oldest row of each group keeps the key, the others
// are flagged legacy_login_key_duplicate and left out of the unique index, so no existing account loses access and
// no new id can join the group. Changing the login id of a flagged row clears the flag.
const loginIdKey = (loginId: string): string => loginId.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC')

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'owner_directory']) {
    await sql`alter table ${sql.table(table)} add column login_key varchar(200)`.execute(db)
    await sql`alter table ${sql.table(table)} add column legacy_login_key_duplicate boolean not null default false`.execute(db)
  }

  // The migrating owner is subject to the forced RLS of users unless it is a superuser: lift it for the backfill.
  await sql`alter table users no force row level security`.execute(db)
  const users = await sql<{ tenantId: string; id: string; userLoginId: string }>`
    select tenant_id as "tenantId", id, user_login_id as "userLoginId" from users order by tenant_id, created_at, id`.execute(db)
  await backfill(db, 'users', users.rows.map((row) => ({ scope: row.tenantId, where: { tenant_id: row.tenantId, id: row.id }, loginId: row.userLoginId })))
  await sql`alter table users force row level security`.execute(db)
  const owners = await sql<{ userLoginId: string }>`
    select user_login_id as "userLoginId" from owner_directory order by created_at, user_login_id`.execute(db)
  await backfill(db, 'owner_directory', owners.rows.map((row) => ({ scope: '', where: { user_login_id: row.userLoginId }, loginId: row.userLoginId })))

  for (const table of ['users', 'owner_directory']) {
    await sql`alter table ${sql.table(table)} alter column login_key set not null`.execute(db)
  }
  await sql`
    create unique index users_login_key on users (tenant_id, login_key) where not legacy_login_key_duplicate`.execute(db)
  await sql`
    create unique index owner_directory_login_key on owner_directory (login_key) where not legacy_login_key_duplicate`.execute(db)

  // Fills the key for writers that leave it out, only where the fold is certain (printable ASCII: lower-casing);
  // a changed login id without a changed key is recomputed the same way. Anything else fails closed
  // (db/functions/svc_fill_login_key.sql).
  await defineFunction(db, 'svc_fill_login_key')
  for (const table of ['users', 'owner_directory']) {
    await sql`
      create trigger ${sql.raw(`${table}_fill_login_key`)} before insert or update of user_login_id, login_key on ${sql.table(table)}
      for each row execute function svc_fill_login_key()`.execute(db)
  }
}

async function backfill(
  db: Kysely<any>,
  table: string,
  rows: Array<{ scope: string; where: Record<string, string>; loginId: string }>,
): Promise<void> {
  const seen = new Set<string>()
  for (const row of rows) {
    const key = loginIdKey(row.loginId)
    const duplicate = seen.has(`${row.scope}\u0000${key}`)
    seen.add(`${row.scope}\u0000${key}`)
    const conditions = Object.entries(row.where).map(([column, value]) => sql`${sql.ref(column)} = ${value}`)
    await sql`
      update ${sql.table(table)} set login_key = ${key}, legacy_login_key_duplicate = ${duplicate}
      where ${sql.join(conditions, sql` and `)}`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'owner_directory']) {
    await sql`drop trigger ${sql.raw(`${table}_fill_login_key`)} on ${sql.table(table)}`.execute(db)
    await sql`alter table ${sql.table(table)} drop column legacy_login_key_duplicate`.execute(db)
    await sql`alter table ${sql.table(table)} drop column login_key`.execute(db)
  }
  await sql`drop function svc_fill_login_key()`.execute(db)
}
