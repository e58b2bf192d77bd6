import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Rate windows and failed-login counters are written on every login, registration and refresh. Losing them in a
// database crash only resets counts, so they skip the write-ahead log: no fsync waits on these writes.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table rate_limit_windows set unlogged`.execute(db)
  await sql`alter table login_failures set unlogged`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table login_failures set logged`.execute(db)
  await sql`alter table rate_limit_windows set logged`.execute(db)
}
