import { findAdvertiser } from '../../db/repos/advertising/advertising-settings.js'
import { refusalsAmong } from '../../db/repos/advertising/ad-consents.js'
import type { StoredRecipient } from '../../db/schema.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { AppError } from '../errors.js'
import type { AdvertisementFrame } from './advertising.js'
import { consentLiveAfter } from './consents.js'
import { isFreeOptOutNumber } from './opt-out-number.js'
import { quietHoursEnd } from './quiet-hours.js'

/**
 * What an advertisement is accepted with: its frame, which of its recipients' numbers are on the opt-out list, and
 * (when the tenant requires consent) which others have no live consent.
 */
export interface AdvertisingTerms {
  frame: AdvertisementFrame
  optedOut: Set<string>
  noConsent: Set<string>
}

/** The consent rule's inputs: now (the service's clock) and SVC_AD_CONSENT_DAYS. */
export interface ConsentClock {
  now: Date
  consentDays: number
}

/** Refuses an advertisement due in the quiet hours, naming the first moment it could be sent. */
export function assertAdvertisingHours(sendAt: Date, timeZone: string): void {
  const allowedFrom = quietHoursEnd(sendAt, timeZone)
  if (allowedFrom === null) return
  throw new AppError(
    'ADVERTISEMENT_QUIET_HOURS',
    `Advertisements are not sent from 21:00 to 08:00 (${timeZone}); the next allowed time is ${allowedFrom.toISOString()}.`,
  )
}

/**
 * The rules an advertisement is held to at acceptance, cheapest first: its send time (`sendAt`: now, or its
 * scheduledAt) outside the quiet hours, a free 080 opt-out number to print, and at least one recipient not on the
 * opt-out list and, while the tenant requires consent, with a live consent, both read for all the recipients in one
 * statement. Every recipient listed: RECIPIENTS_OPTED_OUT; every one left out, some for want of consent:
 * RECIPIENTS_WITHOUT_CONSENT. A number stored before only 080 numbers were
 * taken (a mobile, a 1588) counts as none: printing it would promise a free refusal that costs the guardian a call.
 */
export async function advertisingTerms(
  trx: TenantTx,
  tenantId: number,
  recipients: readonly StoredRecipient[],
  sendAt: Date,
  timeZone: string,
  consent: ConsentClock,
): Promise<AdvertisingTerms> {
  assertAdvertisingHours(sendAt, timeZone)
  const advertiser = await findAdvertiser(trx, tenantId)
  if (advertiser.optOutNumber === null) throw new AppError('OPT_OUT_NUMBER_REQUIRED')
  if (!isFreeOptOutNumber(advertiser.optOutNumber)) {
    throw new AppError('OPT_OUT_NUMBER_REQUIRED', 'The stored opt-out number is not a free 080 number; the OWNER sets one first.')
  }
  const liveAfter = advertiser.consentRequired ? consentLiveAfter(consent.now, consent.consentDays) : null
  const { optedOut, noConsent } = await refusalsAmong(
    trx,
    tenantId,
    recipients.map((recipient) => recipient.phone),
    liveAfter,
  )
  if (optedOut.size > 0 && recipients.every((recipient) => optedOut.has(recipient.phone))) {
    throw new AppError('RECIPIENTS_OPTED_OUT')
  }
  if (noConsent.size > 0 && recipients.every((recipient) => optedOut.has(recipient.phone) || noConsent.has(recipient.phone))) {
    throw new AppError('RECIPIENTS_WITHOUT_CONSENT')
  }
  return { frame: { senderName: advertiser.name, optOutNumber: advertiser.optOutNumber }, optedOut, noConsent }
}
