import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../db/database.js'
import { storeRetentionSettings } from '../../db/repos/audit/retention-settings.js'
import { dropRangesPastRetention, prepareRanges, purgeOldMessages } from '../../db/repos/sms/sms-retention.js'
import { insertPendingMessage, insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { isEmbedded } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import {
  counts,
  DAY_MS,
  insertOldMessage,
  openPastRange,
  partitionExists,
  RETENTION_DAYS,
  usageTotals,
} from '../sms/sms-retention-fixtures.js'

describe('SMS retention (SVC_SMS_RETENTION_DAYS)', () => {
  let iso: IsolatedDatabase
  let runtime: Database

  beforeAll(async () => {
    iso = await isolatedDatabase()
    runtime = iso.open(2)
    await storeRetentionSettings(iso.owner, { auditDays: RETENTION_DAYS, smsDays: RETENTION_DAYS })
  })
  afterAll(async () => {
    await runtime?.close()
    await iso?.drop()
  })

  it('partitions both SMS tables by message id and gives a new message an id of this month', async () => {
    const { rows } = await sql<{ table: string; strategy: string; key: string }>`
      select c.relname as table, p.partstrat as strategy, a.attname as key
      from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
      join pg_attribute a on a.attrelid = c.oid and a.attnum = p.partattrs[0]
      where c.relname in ('sms_messages', 'sms_recipients') order by 1`.execute(iso.owner)
    expect(rows).toEqual([
      { table: 'sms_messages', strategy: 'r', key: 'id' },
      { table: 'sms_recipients', strategy: 'r', key: 'sms_id' },
    ])
    const tenant = await insertTenantAndSender(iso.owner)
    const id = await insertPendingMessage(iso.owner, tenant)
    const now = new Date()
    const month = now.getUTCFullYear() * 100 + now.getUTCMonth() + 1
    expect(Math.floor(id / 1e10)).toBe(month)
    expect(Number.isSafeInteger(id)).toBe(true)
    // This month and two ahead, created once: a second upkeep creates nothing.
    expect(await prepareRanges(iso.owner)).toBe(0)
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1))
    expect(await partitionExists(iso.owner, `sms_messages_p${next.toISOString().slice(0, 7).replace('-', '')}`)).toBe(true)
  })

  it('drops a month wholly past retention as partitions, keeps the totals exact, and deletes the rest row by row', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    // Two months long past: the older is wholly past retention (the next was opened before the cutoff), the newer
    // not (the range opened after it is this month's), though all of its messages are.
    const older = await openPastRange(iso.owner, 16)
    const newer = await openPastRange(iso.owner, 15)
    const olderSuffix = `p${older.openedAt.toISOString().slice(0, 7).replace('-', '')}`
    await insertOldMessage(iso.owner, tenant, new Date(older.openedAt.getTime() + DAY_MS), older.start + 1, 3)
    await insertOldMessage(iso.owner, tenant, new Date(older.openedAt.getTime() + 2 * DAY_MS), older.start + 2, 3)
    const newerId = await insertOldMessage(iso.owner, tenant, new Date(newer.openedAt.getTime() + DAY_MS), newer.start + 1, 3)
    const current = await insertPendingMessage(iso.owner, tenant)
    const usageBefore = await usageTotals(iso.owner, tenant.tenantId)
    expect(await counts(iso.owner, tenant.tenantId)).toEqual({ messages: 4, recipients: 11, counted: 4 })

    const dropped = await dropRangesPastRetention(iso.owner, RETENTION_DAYS, !isEmbedded)
    // The legacy partition goes too: every range after it was opened before the cutoff.
    expect(dropped).toContainEqual({ suffix: olderSuffix, messages: 2 })
    expect(dropped.map((range) => range.suffix)).toContain('legacy')
    expect(await partitionExists(iso.owner, `sms_messages_${olderSuffix}`)).toBe(false)
    expect(await partitionExists(iso.owner, `sms_recipients_${olderSuffix}`)).toBe(false)
    expect(await counts(iso.owner, tenant.tenantId)).toEqual({ messages: 2, recipients: 5, counted: 2 })
    // Nothing is dropped twice.
    expect(await dropRangesPastRetention(iso.owner, RETENTION_DAYS, !isEmbedded)).toEqual([])

    await purgeOldMessages(runtime.db, { batch: 100, batches: 10 })
    const { rows } = await sql<{ id: number }>`select id from sms_messages where tenant_id = ${tenant.tenantId}`.execute(iso.owner)
    expect(rows.map((row) => row.id)).toEqual([current])
    expect(rows.map((row) => row.id)).not.toContain(newerId)
    expect(await counts(iso.owner, tenant.tenantId)).toEqual({ messages: 1, recipients: 2, counted: 1 })
    expect(await usageTotals(iso.owner, tenant.tenantId)).toEqual(usageBefore)
  })

  it('deletes messages older than the retention with their recipients in batches, keeping history totals and usage exact', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    // A range opened 15 months ago whose month is not wholly past retention (the range after it was opened now).
    const range = await openPastRange(iso.owner, 15)
    for (let i = 0; i < 5; i++) {
      await insertOldMessage(iso.owner, tenant, new Date(Date.now() - (RETENTION_DAYS + 1 + i) * DAY_MS), range.start + 10 + i)
    }
    const kept = await insertOldMessage(iso.owner, tenant, new Date(Date.now() - (RETENTION_DAYS - 1) * DAY_MS), range.start + 20)
    const fresh = await insertPendingMessage(iso.owner, tenant)
    const usageBefore = await usageTotals(iso.owner, tenant.tenantId)
    expect(await counts(iso.owner, tenant.tenantId)).toEqual({ messages: 7, recipients: 14, counted: 7 })

    // 0 keeps everything.
    await storeRetentionSettings(iso.owner, { auditDays: RETENTION_DAYS, smsDays: 0 })
    expect(await purgeOldMessages(runtime.db, { batch: 2, batches: 10 })).toBe(0)
    await storeRetentionSettings(iso.owner, { auditDays: RETENTION_DAYS, smsDays: RETENTION_DAYS })
    // Two a statement, as the runtime role (a SECURITY DEFINER function): all five in three statements.
    expect(await purgeOldMessages(runtime.db, { batch: 2, batches: 10 })).toBeGreaterThanOrEqual(5)

    expect(await counts(iso.owner, tenant.tenantId)).toEqual({ messages: 2, recipients: 4, counted: 2 })
    const { rows } = await sql<{ id: number }>`
      select id from sms_messages where tenant_id = ${tenant.tenantId} order by id`.execute(iso.owner)
    expect(rows.map((row) => row.id)).toEqual([kept, fresh].sort((a, b) => a - b))
    expect(await usageTotals(iso.owner, tenant.tenantId)).toEqual(usageBefore)
  })

  it('keeps every month with retention 0', async () => {
    await openPastRange(iso.owner, 30)
    expect(await dropRangesPastRetention(iso.owner, 0, !isEmbedded)).toEqual([])
  })

  it('keeps no foreign key on the SMS tables or their partitions, so a month is dropped without locking tenants or users', async () => {
    const { rows } = await sql<{ constraint: string }>`
      select conname as constraint from pg_constraint
      where contype = 'f' and (conrelid::regclass::text like 'sms_messages%' or conrelid::regclass::text like 'sms_recipients%'
        or confrelid::regclass::text like 'sms_messages%')`.execute(iso.owner)
    expect(rows).toEqual([])
  })

  it('lets the runtime role neither read the ranges nor run the owner-only upkeep', async () => {
    await expect(sql`select * from sms_id_ranges`.execute(runtime.db)).rejects.toThrow(/permission denied/)
    await expect(sql`select svc_prepare_sms_partitions(2)`.execute(runtime.db)).rejects.toThrow(/permission denied/)
    await expect(sql`select svc_forget_sms_range('legacy')`.execute(runtime.db)).rejects.toThrow(/permission denied/)
  })
})
