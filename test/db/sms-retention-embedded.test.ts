import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openEmbedded, type EmbeddedDatabase } from '../../db/embedded.js'
import { dropRangesPastRetention, purgeOldMessages } from '../../db/repos/sms/sms-retention.js'
import { insertPendingMessage, insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { counts, DAY_MS, insertOldMessage, openPastRange, partitionExists, RETENTION_DAYS } from '../sms/sms-retention-fixtures.js'

// The development store (PGlite, one connection) keeps the same partitions and retention; it detaches without
// CONCURRENTLY, which needs a second session to wait on.
describe('SMS retention on the embedded store', () => {
  let dir: string
  let store: EmbeddedDatabase

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-retention-'))
    // Its migration stores the retention the purges apply, as the start-up migration of `npm start` does.
    store = openEmbedded(join(dir, 'data'), { retention: { auditDays: RETENTION_DAYS, smsDays: RETENTION_DAYS } })
    await store.migrate()
  }, 60_000)
  afterAll(async () => {
    await store?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('drops a month wholly past retention and deletes the rest, as on PostgreSQL', async () => {
    const tenant = await insertTenantAndSender(store.owner)
    const older = await openPastRange(store.owner, 16)
    const newer = await openPastRange(store.owner, 15)
    await insertOldMessage(store.owner, tenant, new Date(older.openedAt.getTime() + DAY_MS), older.start + 1)
    await insertOldMessage(store.owner, tenant, new Date(newer.openedAt.getTime() + DAY_MS), newer.start + 1)
    const current = await insertPendingMessage(store.owner, tenant)
    expect(await counts(store.owner, tenant.tenantId)).toEqual({ messages: 3, recipients: 6, counted: 3 })

    const dropped = await store.asOwner((owner) => dropRangesPastRetention(owner, RETENTION_DAYS, false))
    const suffix = `p${older.openedAt.toISOString().slice(0, 7).replace('-', '')}`
    expect(dropped).toContainEqual({ suffix, messages: 1 })
    expect(await partitionExists(store.owner, `sms_messages_${suffix}`)).toBe(false)
    expect(await purgeOldMessages(store.db, { batch: 100, batches: 10 })).toBe(1)

    expect(await counts(store.owner, tenant.tenantId)).toEqual({ messages: 1, recipients: 2, counted: 1 })
    const remaining = await store.owner.selectFrom('smsMessages').select('id').where('tenantId', '=', tenant.tenantId).execute()
    expect(remaining.map((row) => row.id)).toEqual([current])
  })
})
