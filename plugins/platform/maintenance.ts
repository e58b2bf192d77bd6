import fp from 'fastify-plugin'
import { scheduleJob } from '../../lib/scheduled-job.js'
import { sql } from 'kysely'
import type { AppOptions } from '../../app.js'
import { inBatches } from '../../db/repos/in-batches.js'
import { rollUpSmsUsage } from '../../db/repos/audit/sms-usage.js'
import { purgeUsedSignatures } from '../../db/repos/used-internal-signatures.js'

// Once a minute is plenty: expired rows are already ignored by every read, this only keeps tables small.
const PURGE_SCHEDULE = '0 * * * * *'
// Audit events past retention are removed this many per statement (short locks, bounded WAL per transaction), and
// at most this many statements a minute: a backlog (retention shortened, a long stop) drains over a few minutes.
const AUDIT_PURGE_LIMITS = { batch: 5000, batches: 20 }
// Expired rows removed per table a minute at most (svc_purge_expired): far above what a minute expires.
const EXPIRED_PURGE_BATCH = 10_000

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Deletes expired revocations, blacklist entries, sessions, lockouts, rate windows, used internal signatures and
     * audit events past the stored audit retention (db/repos/audit/retention-settings.ts); returns the count.
     */
    purgeExpired(): Promise<number>
    /**
     * Moves the pending usage deltas into the usage totals, per bucket and per local day of SVC_TIME_ZONE
     * (db/repos/audit/sms-usage.ts); returns how many it moved.
     */
    rollUpSmsUsage(): Promise<number>
  }
}

export default fp<AppOptions>(
  async (app, options) => {
    // The age is the owner's stored setting, read by the function: nothing this instance sends can choose it.
    const purgeAuditEvents = () =>
      inBatches(AUDIT_PURGE_LIMITS, async (batch) => {
        const { rows } = await sql<{ purged: number }>`select svc_purge_audit_events(${batch}::int) as purged`.execute(app.db)
        return rows[0]?.purged ?? 0
      })
    const purgeExpired = async () => {
      const { rows } = await sql<{ purged: number }>`select svc_purge_expired(${EXPIRED_PURGE_BATCH}::int) as purged`.execute(app.db)
      // Its own statement (no RLS, nothing to hide from the runtime role): svc_purge_expired stays as it is.
      return (rows[0]?.purged ?? 0) + (await purgeUsedSignatures(app.db)) + (await purgeAuditEvents())
    }
    app.decorate('purgeExpired', purgeExpired)
    // Every instance must run with the same SVC_TIME_ZONE: the days are kept for one zone, and a roll-up in another
    // rebuilds them all.
    const rollUpUsage = () => rollUpSmsUsage(app.db, app.env.SVC_TIME_ZONE)
    app.decorate('rollUpSmsUsage', rollUpUsage)
    // A minute missed in a database outage is part of the outage's two lines (plugins/platform/db.ts), not one more warning.
    const failed = (error: unknown, message: string) => {
      if (!app.databaseOutage.absorbs('maintenance', error)) app.log.warn({ err: error }, message)
    }
    scheduleJob(app, options.scheduledJobs, {
      name: 'purge-expired',
      expression: PURGE_SCHEDULE,
      unref: true,
      tick: async () => {
        try {
          const purged = await purgeExpired()
          app.databaseOutage.reachable()
          if (purged > 0) app.log.debug({ purged }, 'purged expired rows')
        } catch (error) {
          failed(error, 'purge of expired rows failed')
        }
        // Apart from the purge: either may fail without holding up the other. Reports read the pending deltas
        // too, so a missed minute only leaves the journal longer.
        try {
          await rollUpUsage()
        } catch (error) {
          failed(error, 'roll-up of SMS usage failed')
        }
      },
    })
  },
  { name: 'maintenance', dependencies: ['db'] },
)
