import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// Delivery reports are matched per recipient on the provider message id and the provider group of the call that sent
// that recipient: after a partial answer the recipients left over go out in a new group, so the message's first group
// no longer identifies them. Existing rows: a recipient the provider already accepted takes the message's stored group
// (the only group known for it); others stay null until they are sent.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sms_recipients add column provider_group_id varchar(64)`.execute(db)
  await sql`
    update sms_recipients r set provider_group_id = m.provider_group_id
    from sms_messages m
    where m.tenant_id = r.tenant_id and m.id = r.sms_id
      and r.provider_message_id is not null and m.provider_group_id is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sms_recipients drop column provider_group_id`.execute(db)
}
