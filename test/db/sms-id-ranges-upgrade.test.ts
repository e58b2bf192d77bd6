import { sql, type Kysely } from 'kysely'
import { Migrator } from 'kysely/migration'
import { expect, it } from 'vitest'
import { migrateToLatest } from '../../db/migrate.js'
import { migrations } from '../../db/migrations/index.js'
import { findMessage, listRecipients } from '../../db/repos/sms/sms-messages.js'
import type { DB } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { insertPendingMessage, insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { describePostgres } from '../support/helper.js'
import { isolatedDatabase } from '../support/isolated-database.js'

const PARTITIONING = '2026-11-28T03-00-00-sms-id-ranges'

/**
 * Columns later migrations add to the partitioned tables (2026-11-29T07-00-00-alimtalk-sends,
 * 2026-11-29T07-10-00-alimtalk-usage, 2026-11-29T08-00-00-ad-consents): not compared.
 */
const LATER_MESSAGE_COLUMNS = [
  'channel',
  'fallback',
  'kakao_template_id',
  'kakao_pf_id',
  'kakao_provider_template_id',
  'kakao_variables',
  'alimtalk_count',
  'fallback_count',
  'no_consent_count',
]
const LATER_RECIPIENT_COLUMNS = ['variables', 'delivered_via']

/** Every message and recipient of the database as JSON text, in key order: what must survive the upgrade. */
async function everyRow(owner: Kysely<DB>) {
  const { rows: messages } = await sql<{ row: string }>`
    select (to_jsonb(m) - ${LATER_MESSAGE_COLUMNS}::text[])::text as row from sms_messages m order by tenant_id, id`.execute(owner)
  const { rows: recipients } = await sql<{ row: string }>`
    select (to_jsonb(r) - ${LATER_RECIPIENT_COLUMNS}::text[])::text as row
    from sms_recipients r order by tenant_id, sms_id, recipient_index`.execute(owner)
  const { rows: counts } = await sql<{ row: string }>`
    select to_jsonb(c)::text as row from sms_message_counts c order by tenant_id, sender_id`.execute(owner)
  return { messages: messages.map((r) => r.row), recipients: recipients.map((r) => r.row), counts: counts.map((r) => r.row) }
}

describePostgres(`upgrading a filled database to ${PARTITIONING}`, () => {
  it('keeps every message and recipient as it was, in the legacy partition, and gives new messages ids of this month', async () => {
    const iso = await isolatedDatabase({ migrated: false })
    const runtime = iso.open(1)
    try {
      const names = Object.keys(migrations)
      const previous = names[names.indexOf(PARTITIONING) - 1]!
      const migrator = new Migrator({ db: iso.owner, provider: { getMigrations: async () => migrations } })
      expect((await migrator.migrateTo(previous)).error).toBeUndefined()

      // Three academies, 13 months of staff messages of every status with 1 to 5 recipients each, system messages.
      const tenants = [await insertTenantAndSender(iso.owner), await insertTenantAndSender(iso.owner), await insertTenantAndSender(iso.owner)]
      for (const [index, tenant] of tenants.entries()) {
        await sql`
          with created as (
            insert into sms_messages (tenant_id, sender_id, sender_number, recipient_type, recipient_count, title, content,
              message_type, estimated_segments, unit_price, total_price, status, success_count, fail_count, provider,
              provider_group_id, next_attempt_at, sent_at, created_at, updated_at, kind)
            select ${tenant.tenantId}, case when g % 10 = 0 then null else ${tenant.senderId}::bigint end, '0212345678',
              'GUARDIAN', 1 + g % 5, 'Notice ' || g, 'Hello {name} ' || g, case when g % 3 = 0 then 'LMS' else 'SMS' end,
              1 + g % 5, 20, 20 * (1 + g % 5),
              (array['PENDING','DISPATCHED','SENT','FAILED','PARTIAL','CANCELLED'])[1 + g % 6], g % 3, g % 2, 'extsms',
              case when g % 6 in (1, 2, 4) then 'G-' || g end, now(), case when g % 6 in (2, 4) then now() - make_interval(days => g) end,
              now() - make_interval(days => g, secs => ${index}), now(),
              case when g % 10 = 0 then 'VERIFICATION_CODE' else 'STAFF' end
            from generate_series(1, 400) g
            returning tenant_id, id, recipient_count, status
          )
          insert into sms_recipients (tenant_id, sms_id, recipient_index, phone, name, delivery_status, provider_message_id, updated_at)
          select tenant_id, id, i, '0101234' || lpad(i::text, 4, '0'), 'Guardian ' || i,
            case status when 'SENT' then 'DELIVERED' when 'FAILED' then 'FAILED' when 'CANCELLED' then 'CANCELLED'
                        when 'DISPATCHED' then 'DISPATCHED' else 'PENDING' end,
            case when status <> 'PENDING' then 'M-' || id || '-' || i end, now()
          from created cross join generate_series(0, recipient_count - 1) i`.execute(iso.owner)
      }
      const before = await everyRow(iso.owner)
      expect(before.messages).toHaveLength(1200)
      expect(before.recipients.length).toBeGreaterThan(3000)

      await migrateToLatest(iso.owner)

      expect(await everyRow(iso.owner)).toEqual(before)
      const { rows: legacy } = await sql<{ messages: number; recipients: number }>`
        select (select count(*)::int from only sms_messages_legacy) as messages,
               (select count(*)::int from only sms_recipients_legacy) as recipients`.execute(iso.owner)
      expect(legacy[0]).toEqual({ messages: 1200, recipients: before.recipients.length })

      // Read through the runtime role as a request reads them; a new message lands in this month's range.
      const tenant = tenants[0]!
      const { rows: oldest } = await sql<{ id: number }>`
        select id from sms_messages where tenant_id = ${tenant.tenantId} and kind = 'STAFF' order by created_at limit 1`.execute(iso.owner)
      const oldId = oldest[0]!.id
      const read = await withTenant(runtime.db, tenant.tenantId, async (trx) => ({
        message: await findMessage(trx, oldId, {}),
        recipients: await listRecipients(trx, oldId),
      }))
      expect(read.message?.id).toBe(oldId)
      expect(read.recipients.length).toBeGreaterThan(0)
      const { rows: added } = await sql<{ id: number }>`
        insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
          estimated_segments, unit_price, total_price, provider, updated_at)
        values (${tenant.tenantId}, ${tenant.senderId}, 'GUARDIAN', 1, 'New', 'New', 'SMS', 1, 20, 20, 'extsms', now())
        returning id`.execute(iso.owner)
      const now = new Date()
      expect(Math.floor(added[0]!.id / 1e10)).toBe(now.getUTCFullYear() * 100 + now.getUTCMonth() + 1)
    } finally {
      await runtime.close()
      await iso.drop()
    }
  })

  it('migrates down to plain tables and up again without losing, moving or counting twice a message of a month range', async () => {
    const iso = await isolatedDatabase()
    try {
      const tenant = await insertTenantAndSender(iso.owner)
      const ids = [await insertPendingMessage(iso.owner, tenant), await insertPendingMessage(iso.owner, tenant)]
      const before = await everyRow(iso.owner)
      const migrator = new Migrator({ db: iso.owner, provider: { getMigrations: async () => migrations } })
      const previous = Object.keys(migrations)[Object.keys(migrations).indexOf(PARTITIONING) - 1]!
      expect((await migrator.migrateTo(previous)).error).toBeUndefined()
      expect(await everyRow(iso.owner)).toEqual(before)

      await migrateToLatest(iso.owner)

      expect(await everyRow(iso.owner)).toEqual(before)
      const { rows } = await sql<{ id: number }>`
        insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
          estimated_segments, unit_price, total_price, provider, updated_at)
        values (${tenant.tenantId}, ${tenant.senderId}, 'GUARDIAN', 1, 'New', 'New', 'SMS', 1, 20, 20, 'extsms', now())
        returning id`.execute(iso.owner)
      expect(rows[0]!.id).toBeGreaterThan(Math.max(...ids))
    } finally {
      await iso.drop()
    }
  })
})
