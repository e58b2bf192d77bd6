import fp from 'fastify-plugin'
import { scheduleJob } from '../../lib/scheduled-job.js'
import type { AppOptions } from '../../app.js'
import { createDispatcher, type Dispatcher } from '../../lib/dispatch/dispatcher.js'
import { createProvider } from '../../lib/dispatch/providers/index.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The dispatch loop; `kick()` after a send, or a system message (lib/dispatch/system-messages.ts), commits. With
     * SVC_SMS_DISPATCHER=off, kick does nothing.
     */
    dispatcher: Pick<Dispatcher, 'kick' | 'runOnce' | 'processClaim'>
  }
}

/**
 * Message rows are the outbox, for staff sends and system messages alike: a send commits PENDING rows and kicks
 * the loop; the cron tick (SVC_SMS_SCHEDULER_CRON) finds anything due that a kick missed (scheduled sends, retries,
 * a process that died between commit and kick, an expired claim of a crashed instance, which lapses one
 * SVC_SMS_LEASE_SECONDS after its heartbeat stopped).
 */
export default fp<AppOptions>(
  async (app, options) => {
    const { env } = app
    const log = app.log.child({ component: 'dispatcher' })
    const dispatcher = createDispatcher({
      db: app.db,
      provider: createProvider(env, log),
      log,
      batchSize: env.SVC_SMS_BATCH_SIZE,
      maxAttempts: env.SVC_SMS_MAX_ATTEMPTS,
      retryBaseSeconds: env.SVC_SMS_RETRY_BASE_SECONDS,
      leaseSeconds: env.SVC_SMS_LEASE_SECONDS,
      concurrency: env.SVC_SMS_DISPATCH_WORKERS,
      metrics: app.metrics,
      databaseOutage: app.databaseOutage,
      systemSender: env.SVC_SMS_SYSTEM_SENDER ?? null,
      timeZone: env.SVC_TIME_ZONE,
      fallbackPrices: { sms: env.SVC_SMS_PRICE_SMS, lms: env.SVC_SMS_PRICE_LMS },
      clock: app.clock,
      adConsentDays: env.SVC_AD_CONSENT_DAYS,
    })
    const enabled = env.SVC_SMS_DISPATCHER === 'on'
    app.decorate('dispatcher', {
      kick: () => (enabled ? dispatcher.kick() : undefined),
      runOnce: dispatcher.runOnce,
      processClaim: dispatcher.processClaim,
    })
    if (!enabled) return

    scheduleJob(app, options.scheduledJobs, {
      name: 'sms-dispatch',
      expression: env.SVC_SMS_SCHEDULER_CRON,
      tick: () => dispatcher.kick(),
      onReady: () => dispatcher.kick(),
      // On shutdown: no new claims; in-flight sends finish and record, claims not handed to the provider are released.
      stop: () => dispatcher.stop(),
    })
  },
  { name: 'dispatcher', dependencies: ['env', 'db', 'metrics', 'clock'] },
)
