import type { Kysely } from 'kysely'
import { findAdvertiser } from '../../db/repos/advertising/advertising-settings.js'
import { claimDueConsents, markNoticesQueued, settleNotices, tenantsWithNotices } from '../../db/repos/advertising/ad-consents.js'
import type { DB } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import type { Clock } from '../clock.js'
import { enqueueSystemSmsBatch, type SystemSmsSettings } from '../dispatch/system-messages.js'
import { consentLiveAfter, consentNoticeText, noticeDueBefore, type ConsentSettings } from './consents.js'
import { isFreeOptOutNumber } from './opt-out-number.js'

/**
 * The two-year notice (docs/api.md#advertising), run at least once a minute by plugins/advertising/index.ts:
 * 1. finds, across tenants, those with consents due for their notice or notices to settle (ids only,
 *    db/functions/svc_ad_consent_notice_tenants.sql);
 * 2. per tenant, settles the notices whose hand-over is known: confirmedAt becomes the hand-over time;
 * 3. claims due consents in the database (FOR UPDATE SKIP LOCKED) and, in the same transaction, queues one
 *    CONSENT_NOTICE system message each and marks them, so any number of instances together send each notice once.
 * A tenant without a free 080 number (a notice must say how to refuse) or without a sender number the provider
 * takes gets no notice; its consents lapse at the end of their life, as the law wants when no notice could go out.
 */

export interface ConsentNoticeJob {
  db: Kysely<DB>
  clock: Clock
  consent: ConsentSettings
  sms: SystemSmsSettings
  timeZone: string
  /** Called after a transaction queued notices: the dispatcher sends them without waiting for its tick. */
  kick: () => void
  /** A tenant whose notices could not be queued this round; the next round tries again. */
  onTenantFailure?: (tenantId: number, error: unknown) => void
}

export interface NoticeRound {
  queued: number
  renewed: number
  failed: number
}

// Consents claimed per transaction, and transactions per tenant per round: a backlog drains over a few minutes
// without one round holding locks or a tenant's quota row for long.
const BATCH = 200
const BATCHES_PER_TENANT = 10
const TENANTS_PER_ROUND = 1000

export async function runConsentNotices(job: ConsentNoticeJob): Promise<NoticeRound> {
  const now = job.clock()
  const dueBefore = noticeDueBefore(now, job.consent.noticeDays)
  const liveAfter = consentLiveAfter(now, job.consent.consentDays)
  const round: NoticeRound = { queued: 0, renewed: 0, failed: 0 }
  for (const tenantId of await tenantsWithNotices(job.db, dueBefore, liveAfter, TENANTS_PER_ROUND)) {
    try {
      const settled = await withTenant(job.db, tenantId, (trx) => settleNotices(trx, tenantId))
      round.renewed += settled.renewed
      round.failed += settled.failed
      for (let batch = 0; batch < BATCHES_PER_TENANT; batch += 1) {
        const queued = await withTenant(job.db, tenantId, async (trx) => {
          const advertiser = await findAdvertiser(trx, tenantId)
          const optOutNumber = advertiser.optOutNumber
          if (optOutNumber === null || !isFreeOptOutNumber(optOutNumber)) return 0
          const due = await claimDueConsents(trx, tenantId, { dueBefore, liveAfter, limit: BATCH })
          const notices = due.map((consent) => ({
            to: consent.phone,
            kind: 'CONSENT_NOTICE' as const,
            text: consentNoticeText({ senderName: advertiser.name, consentedAt: consent.consentedAt, optOutNumber, timeZone: job.timeZone }),
          }))
          await enqueueSystemSmsBatch(trx, job.sms, tenantId, notices, (ids) =>
            markNoticesQueued(
              trx,
              tenantId,
              due.map((consent) => consent.phone),
              ids,
            ),
          )
          return notices.length
        })
        round.queued += queued
        if (queued > 0) job.kick()
        if (queued < BATCH) break
      }
    } catch (error) {
      job.onTenantFailure?.(tenantId, error)
    }
  }
  return round
}
