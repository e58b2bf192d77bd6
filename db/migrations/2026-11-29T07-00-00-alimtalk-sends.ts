import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// KakaoTalk notices sent (AlimTalk, docs/api.md#kakaotalk-notices), on the partitioned sms_messages and
// sms_recipients: columns and checks added to the parents reach every partition, and the partitions created later
// copy them (svc_prepare_sms_partitions: like ... including defaults including constraints).
// - sms_messages.channel: SMS or ALIMTALK. fallback (ALIMTALK only, null for SMS): SMS (the provider sends the same
//   text as SMS or LMS when AlimTalk fails) or NONE.
// - kakao_template_id: the tenant's imported template (kakao_templates.id), without a foreign key so that deleting
//   the template keeps the history. kakao_pf_id and kakao_provider_template_id are frozen at acceptance: what the
//   hand-over sends. content keeps the template's content unrendered (#{name} placeholders).
// - kakao_variables: the request-wide variables; sms_recipients.variables the recipient's own values, after the
//   name and className defaults, so the hand-over needs nothing else.
// - sms_recipients.delivered_via: ALIMTALK, SMS or LMS as the delivery report tells; null until known.
export async function up(db: Kysely<any>): Promise<void> {
  // Constant defaults: PostgreSQL 11+ adds these without rewriting the table.
  await sql`
    alter table sms_messages
      add column channel text not null default 'SMS'
        constraint sms_messages_channel check (channel in ('SMS', 'ALIMTALK')),
      add column fallback text constraint sms_messages_fallback check (fallback in ('SMS', 'NONE')),
      add column kakao_template_id bigint,
      add column kakao_pf_id text,
      add column kakao_provider_template_id text,
      add column kakao_variables jsonb`.execute(db)
  await sql`
    alter table sms_recipients
      add column variables jsonb,
      add column delivered_via text
        constraint sms_recipients_delivered_via check (delivered_via in ('ALIMTALK', 'SMS', 'LMS'))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sms_recipients drop column delivered_via, drop column variables`.execute(db)
  await sql`
    alter table sms_messages drop column kakao_variables, drop column kakao_provider_template_id,
      drop column kakao_pf_id, drop column kakao_template_id, drop column fallback, drop column channel`.execute(db)
}
