import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// System messages (a one-time code) share the outbox with staff sends, so one dispatcher, lease and retry path sends
// both. `kind` tells them apart: STAFF (every existing row) is a staff member's send, listed in the history and
// counted per sender; any other kind is the service's own message, with no sender user, never listed. discard_after:
// the moment after which a message is no longer handed to the provider (it ends FAILED instead), for a code that
// is useless once expired. The history counters' triggers (db/functions) skip other kinds from now on.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table sms_messages
      add column kind varchar(20) not null default 'STAFF'
        constraint sms_messages_kind check (kind in ('STAFF', 'VERIFICATION_CODE')),
      add column discard_after timestamptz,
      alter column sender_id drop not null,
      add constraint sms_messages_sender_of_kind check ((kind = 'STAFF') = (sender_id is not null))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from sms_messages where kind <> 'STAFF'`.execute(db)
  await sql`
    alter table sms_messages
      drop constraint sms_messages_sender_of_kind,
      alter column sender_id set not null,
      drop column discard_after,
      drop column kind`.execute(db)
}
