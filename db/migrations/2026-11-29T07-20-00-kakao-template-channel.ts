import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// A template belongs to the Kakao channel it was read under: once the academy links another channel, the provider
// refuses the old channel's templates, so a send must know which channel each copy came from. Copies made before
// this column existed were read under the channel linked now (a template of another channel was never imported);
// where no channel is linked any more, the column stays null, which no channel matches.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table kakao_templates add column pf_id varchar(100)`.execute(db)
  await sql`
    update kakao_templates t set pf_id = c.pf_id
    from kakao_channels c where c.tenant_id = t.tenant_id`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table kakao_templates drop column pf_id`.execute(db)
}
