import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Refresh reuse grace: two tabs refreshing with one token at once used to end the session, since the loser presented
// the token the winner had just replaced. The session now remembers that token (previous_refresh_jti; last_refreshed_at
// is when it was replaced), and svc_rotate_session answers it, within reuse_grace_seconds, with REISSUED and the
// session's current pair (same JTIs and expiries). Still one statement.
// Existing sessions start without a previous token: their next rotation records one.
// svc_rotate_session lives in db/functions and is applied after the migrations (db/function-files.ts); this
// migration stays listed because databases record that it ran.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sessions add column previous_refresh_jti uuid`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sessions drop column previous_refresh_jti`.execute(db)
}
