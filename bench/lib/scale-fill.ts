/**
 * A database at scale for bench/scenarios/scale.ts: 13 past months of SMS history over many academies, each month in
 * its own range of ids (svc_prepare_sms_partitions opened at the month's start), rows inserted set-based with
 * explicit ids because the id sequence only moves forward. Every month holds the same rows (the same function of the
 * row's number), so the two oldest are alike and one can be dropped, the other deleted, in the same run.
 */
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import { benchConfig } from './config.js'
import { log } from './load.js'
import type { SeededTenant } from './seed.js'

export const PAST_MONTHS = 13

export interface ScaleFill {
  /** The past months, oldest first, as the first day of each (UTC, yyyy-mm-dd). */
  months: string[]
  messagesPerMonth: number
  /** Of those, the large academy's. */
  largePerMonth: number
  messages: number
  recipients: number
  seconds: number
}

/** The first day of the month `back` months before this one (UTC). */
function monthStart(back: number): string {
  const now = new Date()
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)).toISOString().slice(0, 10)
}

/**
 * One sending account in each of `count` academies: row `slot` of bench_scale_senders names the academy and sender
 * that the month inserts give message n when n % count = slot.
 */
async function insertAcademies(owner: Kysely<DB>, count: number): Promise<void> {
  await sql`create table bench_scale_senders (slot integer primary key, tenant_id bigint not null, sender_id bigint not null)`.execute(owner)
  await sql`
    with tenants as (
      insert into tenants (slug, custom_id, name, updated_at)
      select 'scale-' || g, 'SCALE' || g, 'Scale Academy ' || g, now() from generate_series(0, ${count - 1}) g
      returning id, slug
    ), senders as (
      insert into users (tenant_id, user_login_id, password_hash, name, role, avatar_seed, updated_at)
      select id, 'staff-' || slug, 'x', 'Staff', 'MANAGER', 'seed', now() from tenants
      returning tenant_id, id
    )
    insert into bench_scale_senders (slot, tenant_id, sender_id)
    select substr(t.slug, 7)::int, s.tenant_id, s.id from senders s join tenants t on t.id = s.tenant_id`.execute(owner)
}

/**
 * One month's messages, created_at spread evenly over the month in id order. Message n: the large academy's while
 * n <= largePerMonth (every fourth from its first staff member, the rest from its owner), else an academy of
 * bench_scale_senders; 1 to 2 x average - 1 recipients; final statuses only (nothing due, nothing to confirm), so no
 * dispatcher touches them. Recipients follow from the messages, one statement, since both tables share the range.
 */
async function fillMonth(owner: Kysely<DB>, month: string, fill: Omit<ScaleFill, 'seconds' | 'months' | 'messages' | 'recipients'>, large: SeededTenant): Promise<void> {
  const spread = Math.round(2 * benchConfig.scaleRecipientsPerMessage - 1)
  await sql`select svc_prepare_sms_partitions(0, ${month}::timestamptz)`.execute(owner)
  await sql`
    insert into sms_messages (tenant_id, id, sender_id, sender_number, recipient_type, recipient_count, title, content,
      message_type, estimated_segments, unit_price, total_price, status, success_count, fail_count, provider,
      sent_at, cancelled_at, next_attempt_at, created_at, updated_at)
    select m.tenant_id, svc_sms_range_start(${month}::date) + m.n, m.sender_id, '0212345678',
      case when m.n % 3 = 0 then 'GUARDIAN' else 'CUSTOM' end, m.rc,
      'Notice ' || m.n || case when m.n % 10 = 0 then ' exam' else '' end,
      'Hello {name}, this is message number ' || m.n || ' of the month, long enough to be cut in the list view.',
      'SMS', m.rc, 20, 20 * m.rc, m.status,
      case m.status when 'SENT' then m.rc when 'PARTIAL' then (m.rc + 1) / 2 else 0 end,
      case m.status when 'FAILED' then m.rc when 'PARTIAL' then m.rc / 2 else 0 end,
      'extsms',
      case when m.status <> 'CANCELLED' then m.at + interval '5 seconds' end,
      case when m.status = 'CANCELLED' then m.at + interval '5 seconds' end,
      m.at, m.at, m.at + interval '5 seconds'
    from (
      select g as n, 1 + (g * 7) % ${spread} as rc,
        case when g % 10 < 7 then 'SENT' when g % 10 = 7 then 'FAILED' when g % 10 = 8 then 'PARTIAL' else 'CANCELLED' end as status,
        ${month}::timestamptz + (g - 0.5) / ${fill.messagesPerMonth}::float8 * ((${month}::timestamptz + interval '1 month') - ${month}::timestamptz) as at,
        case when g <= ${fill.largePerMonth} then ${large.tenantId}::bigint else s.tenant_id end as tenant_id,
        case when g <= ${fill.largePerMonth} then
          case when g % 4 = 0 then ${large.staff[0]!.id}::bigint else ${large.ownerId}::bigint end
        else s.sender_id end as sender_id
      from generate_series(1, ${fill.messagesPerMonth}) g
      join bench_scale_senders s on s.slot = g % ${benchConfig.scaleAcademies}
    ) m`.execute(owner)
  await sql`
    insert into sms_recipients (tenant_id, sms_id, recipient_index, phone, name, class_name, recipient_role,
      delivery_status, provider_message_id, reported_at, updated_at)
    select m.tenant_id, m.id, r, '010' || lpad(((m.id % 100000000) * 7 + r * 7919)::bigint % 90000000 + 10000000 || '', 8, '0'),
      'Student ' || r, 'Class ' || (m.id % 12), case when r % 2 = 0 then 'GUARDIAN' else 'STUDENT' end,
      case m.status when 'SENT' then 'DELIVERED' when 'FAILED' then 'FAILED' when 'CANCELLED' then 'CANCELLED'
        else case when r % 2 = 0 then 'DELIVERED' else 'FAILED' end end,
      case when m.status <> 'CANCELLED' then 'p-' || m.id || '-' || r end,
      case when m.status <> 'CANCELLED' then m.sent_at + interval '1 minute' end, m.updated_at
    from sms_messages m cross join lateral generate_series(0, m.recipient_count - 1) r
    where m.id >= svc_sms_range_start(${month}::date) and m.id < svc_sms_range_start((${month}::date + interval '1 month')::date)`.execute(owner)
}

/**
 * Fills the database: the academies, then each past month, oldest first, then VACUUM ANALYZE (autovacuum would have
 * long visited tables this size). `large` exists already (seedTenant, so its staff can log in).
 */
export async function fillScale(owner: Kysely<DB>, large: SeededTenant): Promise<ScaleFill> {
  const started = performance.now()
  const messagesPerMonth = Math.round(benchConfig.scaleMessages / PAST_MONTHS)
  const largePerMonth = Math.round(messagesPerMonth / 10)
  const months = Array.from({ length: PAST_MONTHS }, (_, i) => monthStart(PAST_MONTHS - i))
  await insertAcademies(owner, benchConfig.scaleAcademies)
  for (const month of months) {
    const monthStarted = performance.now()
    await fillMonth(owner, month, { messagesPerMonth, largePerMonth }, large)
    log(`  filled ${month}: ${messagesPerMonth.toLocaleString('en')} messages with recipients in ${((performance.now() - monthStarted) / 1000).toFixed(1)} s`)
  }
  await sql`drop table bench_scale_senders`.execute(owner)
  const vacuumStarted = performance.now()
  await sql`vacuum analyze sms_messages, sms_recipients, sms_message_counts`.execute(owner)
  log(`  vacuum analyze in ${((performance.now() - vacuumStarted) / 1000).toFixed(1)} s`)
  const { rows } = await sql<{ messages: string; recipients: string }>`
    select (select count(*) from sms_messages) as messages, (select count(*) from sms_recipients) as recipients`.execute(owner)
  return {
    months,
    messagesPerMonth,
    largePerMonth,
    messages: Number(rows[0]!.messages),
    recipients: Number(rows[0]!.recipients),
    seconds: (performance.now() - started) / 1000,
  }
}

/** (tenant, sender) pairs whose sms_message_counts row differs from a count of their staff messages; 0 when exact. */
export async function countMismatches(owner: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ mismatches: string }>`
    select count(*) as mismatches
    from (select tenant_id, sender_id, count(*) as messages from sms_messages where kind = 'STAFF' group by 1, 2) counted
    full join sms_message_counts kept using (tenant_id, sender_id)
    where coalesce(counted.messages, 0) <> coalesce(kept.messages, 0)`.execute(owner)
  return Number(rows[0]!.mismatches)
}
