import fp from 'fastify-plugin'
import { scheduleJob } from '../../lib/scheduled-job.js'
import type { AppOptions } from '../../app.js'
import { readRetentionSettings } from '../../db/repos/audit/retention-settings.js'
import { dropRangesPastRetention, prepareRanges, purgeOldMessages, type DroppedRange } from '../../db/repos/sms/sms-retention.js'

// Rows past retention that were not dropped with their month (db/repos/sms/sms-retention.ts): this many messages per
// statement, at most this many statements a minute. Whole months go as partitions; what is left is at most about a
// month's oldest day a day, so a minute's budget drains it long before the next day's.
const PURGE_LIMITS = { batch: 1000, batches: 20 }
const PURGE_SCHEDULE = '30 * * * * *'
// Ranges are created two months ahead and a month is opened within the hour it begins.
const UPKEEP_SCHEDULE = '0 7 * * * *'

/** What one partition upkeep did. */
export interface RangeUpkeep {
  created: number
  dropped: DroppedRange[]
}

declare module 'fastify' {
  interface FastifyInstance {
    smsRetention: {
      /** Deletes messages past the stored SMS retention that no dropped month took, in batches; returns how many. */
      purgeOldMessages(): Promise<number>
      /** As the owner: creates the ranges ahead, opens this month's and drops the months past the stored retention. */
      keepRanges(): Promise<RangeUpkeep>
    }
  }
}

export default fp<AppOptions>(
  async (app, options) => {
    const purge = () => purgeOldMessages(app.db, PURGE_LIMITS)
    // Months go by the same stored retention the row purge reads, not by this instance's SVC_SMS_RETENTION_DAYS:
    // whoever migrated last decided it, and both removals must agree.
    const keepRanges = () =>
      app.database.asOwner(async (owner) => ({
        created: await prepareRanges(owner),
        dropped: await dropRangesPastRetention(owner, (await readRetentionSettings(owner)).smsDays, app.database.kind === 'postgres'),
      }))
    app.decorate('smsRetention', { purgeOldMessages: purge, keepRanges })

    const failed = (error: unknown, message: string) => {
      if (!app.databaseOutage.absorbs('maintenance', error)) app.log.warn({ err: error }, message)
    }
    scheduleJob(app, options.scheduledJobs, {
      name: 'sms-retention',
      expression: PURGE_SCHEDULE,
      unref: true,
      tick: async () => {
        try {
          const purged = await purge()
          if (purged > 0) app.log.info({ purged }, 'removed SMS messages past retention')
        } catch (error) {
          failed(error, 'removal of SMS messages past retention failed')
        }
      },
    })
    if (app.env.SVC_SMS_PARTITION_UPKEEP === 'off') return

    let running: Promise<void> | undefined
    const upkeep = () =>
      (running ??= keepRanges()
        .then(({ created, dropped }) => {
          if (created > 0 || dropped.length > 0) app.log.info({ created, dropped }, 'SMS partitions kept')
        })
        .catch((error: unknown) => failed(error, 'SMS partition upkeep failed (it needs the owner: DATABASE_MIGRATION_URL)'))
        .finally(() => {
          running = undefined
        }))
    scheduleJob(app, options.scheduledJobs, {
      name: 'sms-partition-upkeep',
      expression: UPKEEP_SCHEDULE,
      unref: true,
      tick: upkeep,
      // At start too: an instance started after a month began opens that month's range without waiting for the hour.
      onReady: () => {
        void upkeep()
      },
      stop: async () => running,
    })
  },
  { name: 'sms-retention', dependencies: ['db'] },
)
