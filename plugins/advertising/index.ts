import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import { runConsentNotices, type NoticeRound } from '../../lib/advertising/consent-notices.js'
import { consentSettings } from '../../lib/advertising/consents.js'
import { syncOptOuts, type SyncRound } from '../../lib/advertising/opt-out-sync.js'
import { systemSmsSettings } from '../../lib/dispatch/system-messages.js'
import { createRefusalList } from '../../lib/dispatch/providers/index.js'
import { scheduleJob } from '../../lib/scheduled-job.js'

/**
 * Advertising (Korean Information and Communications Network Act, article 50): the frame, the quiet hours, the
 * opt-out list, consents and the refusals made at the 080 number. Its rules also run inside sending
 * (lib/sms/create-message.ts) and dispatch (lib/dispatch/prepare-hand-over.ts, db/functions/svc_claim_due_sms.sql);
 * this plugin runs its two background jobs: the two-year notice of every consent (lib/advertising/consent-notices.ts)
 * and the reading of the provider's 080 refusal list into the opt-out lists (lib/advertising/opt-out-sync.ts).
 * Routes: routes/v1/sms/advertising.ts, routes/v1/sms/opt-outs.ts, routes/v1/sms/ad-consents.ts.
 * Logic: lib/advertising/, and the provider's list beside its SMS adapters: lib/dispatch/providers/refusal-list.ts,
 * lib/dispatch/providers/extsms-refusals.ts. Repositories: db/repos/advertising/.
 */

declare module 'fastify' {
  interface FastifyInstance {
    advertising: {
      /** One round of the two-year notice job: settles handed-over notices, queues the due ones. */
      sendConsentNotices(): Promise<NoticeRound>
      /** One round of the 080 list's reading, for every tenant that has one. */
      syncOptOuts(): Promise<SyncRound>
    }
  }
}

// The law wants the notice before the consent lapses; looking every minute keeps it within a minute of being due.
const NOTICE_SCHEDULE = '20 * * * * *'
// The 080 list is read every SVC_OPT_OUT_SYNC_SECONDS; the schedule only looks whether that much time has passed.
const SYNC_LOOK_SCHEDULE = '*/10 * * * * *'

export default fp<AppOptions>(
  async (app, options) => {
    const { env } = app
    const log = app.log.child({ component: 'advertising' })
    const tenantFailed = (what: string) => (tenantId: number, error: unknown) => {
      if (!app.databaseOutage.absorbs('maintenance', error)) log.warn({ err: error, tenantId }, what)
    }
    const sendConsentNotices = () =>
      runConsentNotices({
        db: app.db,
        clock: app.clock,
        consent: consentSettings(env),
        sms: systemSmsSettings(env),
        timeZone: env.SVC_TIME_ZONE,
        kick: () => app.dispatcher.kick(),
        onTenantFailure: tenantFailed('consent notices of a tenant could not be queued'),
      })
    const list = createRefusalList(env)
    const sync = () => syncOptOuts({ db: app.db, list, onTenantFailure: tenantFailed('reading the 080 list of a tenant failed') })
    app.decorate('advertising', { sendConsentNotices, syncOptOuts: sync })

    const failed = (error: unknown, message: string) => {
      if (!app.databaseOutage.absorbs('maintenance', error)) log.warn({ err: error }, message)
    }
    scheduleJob(app, options.scheduledJobs, {
      name: 'ad-consent-notices',
      expression: NOTICE_SCHEDULE,
      unref: true,
      tick: async () => {
        try {
          const round = await sendConsentNotices()
          if (round.queued + round.renewed + round.failed > 0) log.info(round, 'consent notices')
        } catch (error) {
          failed(error, 'the consent notice job failed')
        }
      },
    })

    if (env.SVC_OPT_OUT_SYNC_SECONDS === 0) return
    let lastSync = 0
    scheduleJob(app, options.scheduledJobs, {
      name: 'opt-out-080-sync',
      expression: SYNC_LOOK_SCHEDULE,
      unref: true,
      tick: async () => {
        if (Date.now() - lastSync < env.SVC_OPT_OUT_SYNC_SECONDS * 1000) return
        lastSync = Date.now()
        try {
          const round = await sync()
          if (round.added > 0) log.info(round, 'refusals read from the 080 list')
        } catch (error) {
          failed(error, 'reading the 080 lists failed')
        }
      },
    })
  },
  { name: 'advertising', dependencies: ['env', 'db', 'clock', 'dispatch'] },
)
