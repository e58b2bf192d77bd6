import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Keys for data at rest rotate (docs/security.md#keys-for-data-at-rest): a sealed value names its key, and a re-seal
// moves it to a new one. A recovery code is kept as an HMAC, which cannot be moved without the code, so each user's
// set gets a random key of its own, kept sealed here, and the rotation re-seals that. Null: a set hashed under the
// data keys' legacy key, as every set before this migration was; the column needs no backfill.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table user_second_factors add column recovery_key_sealed text`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table user_second_factors drop column recovery_key_sealed`.execute(db)
}
