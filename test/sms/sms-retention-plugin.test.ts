import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgres } from '../../db/database.js'
import { until } from '../support/auth-fixtures.js'
import { insertPendingMessage, insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { buildTestApp, describePostgres, startTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import { counts, DAY_MS, insertOldMessage, openPastRange, partitionExists } from './sms-retention-fixtures.js'

describePostgres('SMS retention in the running service', () => {
  let iso: IsolatedDatabase

  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso?.drop()
  })

  /** A migration run as `npm run migrate` makes it: it stores the environment's retention as the owner's setting. */
  async function migrateWithSmsRetention(days: number): Promise<void> {
    const migrating = openPostgres(iso.ownerUrl, 1, { retention: { auditDays: 400, smsDays: days } })
    try {
      await migrating.migrate()
    } finally {
      await migrating.close()
    }
  }

  it('drops the months past the SVC_SMS_RETENTION_DAYS a migration stored at start, as the owner, and its minute job deletes the rest', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    const older = await openPastRange(iso.owner, 16)
    const newer = await openPastRange(iso.owner, 15)
    await insertOldMessage(iso.owner, tenant, new Date(older.openedAt.getTime() + DAY_MS), older.start + 1)
    await insertOldMessage(iso.owner, tenant, new Date(newer.openedAt.getTime() + DAY_MS), newer.start + 1)
    const current = await insertPendingMessage(iso.owner, tenant)
    const suffix = `p${older.openedAt.toISOString().slice(0, 7).replace('-', '')}`

    // 0 keeps all: the upkeep at start creates ranges but drops nothing, the minute job deletes nothing.
    await migrateWithSmsRetention(0)
    const keeping = await buildTestApp({ DATABASE_URL: iso.url, DATABASE_MIGRATION_URL: iso.ownerUrl, SVC_SMS_PARTITION_UPKEEP: 'on' })
    try {
      expect(await keeping.smsRetention.keepRanges()).toEqual({ created: 0, dropped: [] })
      expect(await keeping.smsRetention.purgeOldMessages()).toBe(0)
    } finally {
      await keeping.close()
    }
    expect(await counts(iso.owner, tenant.tenantId)).toEqual({ messages: 3, recipients: 6, counted: 3 })

    // The minute job (second 30) may take the row before the call below does: between them they remove it once.
    const purgedByJob: number[] = []
    await migrateWithSmsRetention(400)
    const app = await startTestApp({
      env: { DATABASE_URL: iso.url, DATABASE_MIGRATION_URL: iso.ownerUrl, LOG_LEVEL: 'info', SVC_SMS_PARTITION_UPKEEP: 'on' },
      onLine: (line) => {
        const entry = JSON.parse(line) as { msg?: string; purged?: number }
        if (entry.msg === 'removed SMS messages past retention') purgedByJob.push(entry.purged ?? 0)
      },
      scheduledJobs: true,
    })
    try {
      await until(async () => !(await partitionExists(iso.owner, `sms_messages_${suffix}`)), 15_000)
      const purgedByCall = await app.smsRetention.purgeOldMessages()
      const purged = () => purgedByCall + purgedByJob.reduce((sum, count) => sum + count, 0)
      // A job that held the row while the call waited on it logs just after.
      await until(() => purged() > 0)
      expect(purged()).toBe(1)
    } finally {
      await app.close()
    }
    const { rows } = await sql<{ id: number }>`select id from sms_messages where tenant_id = ${tenant.tenantId}`.execute(iso.owner)
    expect(rows.map((row) => row.id)).toEqual([current])
    expect(await counts(iso.owner, tenant.tenantId)).toEqual({ messages: 1, recipients: 2, counted: 1 })
  })

  it('starts and serves without owner credentials; the upkeep is refused, row retention still works', async () => {
    // The runtime login as "owner": it may neither create nor detach partitions.
    const app = await buildTestApp({ DATABASE_URL: iso.url, DATABASE_MIGRATION_URL: iso.url, SVC_SMS_PARTITION_UPKEEP: 'on' })
    try {
      await expect(app.smsRetention.keepRanges()).rejects.toThrow(/permission denied|must be owner/)
      const health = await app.inject({ method: 'GET', url: '/actuator/health/readiness' })
      expect(health.statusCode).toBe(200)
      expect(await app.smsRetention.purgeOldMessages()).toBe(0)
    } finally {
      await app.close()
    }
  })
})
