import { findAdvertiser } from '../../db/repos/advertising/advertising-settings.js'
import { listedAmong } from '../../db/repos/advertising/opt-outs.js'
import type { StoredRecipient } from '../../db/schema.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { AppError } from '../errors.js'
import type { AdvertisementFrame } from './advertising.js'
import { isFreeOptOutNumber } from './opt-out-number.js'
import { quietHoursEnd } from './quiet-hours.js'

/** What an advertisement is accepted with: its frame, and which of its recipients' numbers are on the opt-out list. */
export interface AdvertisingTerms {
  frame: AdvertisementFrame
  optedOut: Set<string>
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
 * opt-out list, which is read for all the recipients in one statement. A number stored before only 080 numbers were
 * taken (a mobile, a 1588) counts as none: printing it would promise a free refusal that costs the guardian a call.
 */
export async function advertisingTerms(
  trx: TenantTx,
  tenantId: number,
  recipients: readonly StoredRecipient[],
  sendAt: Date,
  timeZone: string,
): Promise<AdvertisingTerms> {
  assertAdvertisingHours(sendAt, timeZone)
  const advertiser = await findAdvertiser(trx, tenantId)
  if (advertiser.optOutNumber === null) throw new AppError('OPT_OUT_NUMBER_REQUIRED')
  if (!isFreeOptOutNumber(advertiser.optOutNumber)) {
    throw new AppError('OPT_OUT_NUMBER_REQUIRED', 'The stored opt-out number is not a free 080 number; the OWNER sets one first.')
  }
  const optedOut = await listedAmong(
    trx,
    tenantId,
    recipients.map((recipient) => recipient.phone),
  )
  if (optedOut.size > 0 && recipients.every((recipient) => optedOut.has(recipient.phone))) {
    throw new AppError('RECIPIENTS_OPTED_OUT')
  }
  return { frame: { senderName: advertiser.name, optOutNumber: advertiser.optOutNumber }, optedOut }
}
