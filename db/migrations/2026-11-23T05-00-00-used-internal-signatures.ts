import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// A signed internal call is accepted once, so a captured one cannot be replayed: the signature of every accepted call
// is kept until its timestamp leaves the 300 s window, in the database so every instance refuses a replay. The primary
// key makes the claim atomic: of two concurrent replays, the second insert waits for the first and then conflicts.
// No row-level security: the table holds HMAC digests and expiry times only, no tenant data (and no tenant_id).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table used_internal_signatures (
      signature char(64) primary key,
      expires_at timestamptz not null
    )`.execute(db)
  await sql`create index used_internal_signatures_expires_at on used_internal_signatures (expires_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table used_internal_signatures`.execute(db)
}
