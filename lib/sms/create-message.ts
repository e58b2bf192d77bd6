import { findSenderSetting, LIVE_PROVIDER } from '../../db/repos/sms/sender-settings.js'
import {
  insertMessage,
  insertRecipients,
  type LeftOutStatus,
  templateExists,
  type MessageRecord,
  type RecipientRecord,
} from '../../db/repos/sms/sms-messages.js'
import { checkDailyRecipients, reserveDailyRecipients, type DailyQuota } from '../../db/repos/sms/sms-quota.js'
import type { SmsPurpose, StoredRecipient } from '../../db/schema.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import type { Clock } from '../clock.js'
import type { Env } from '../env.js'
import { AppError } from '../errors.js'
import { frameText } from '../advertising/advertising.js'
import { advertisingTerms, type AdvertisingTerms } from '../advertising/advertising-terms.js'
import { alimtalkEstimate, personalise, type AlimtalkDraft } from '../kakao/alimtalk-send.js'
import { assertRecipientCount, mergeRecipients } from './recipients.js'
import { estimateMessage, inferRecipientType, type MessageEstimate } from './sizing.js'

export interface SendSettings {
  provider: Env['SVC_SMS_PROVIDER']
  /** KRW per recipient: SMS and LMS by size; an AlimTalk (SVC_SMS_PRICE_ALIMTALK) whatever its size. */
  prices: { sms: number; lms: number; alimtalk: number }
  /** Recipients per tenant per local day (SVC_TIME_ZONE); limit 0 = unlimited. */
  dailyQuota: DailyQuota
  /** Recipients of one send, after merging, that may share a phone number. */
  maxPerPhone: number
  /** The service's clock: an advertisement sent now is judged against the quiet hours by it, and its consents. */
  clock: Clock
  /** SVC_AD_CONSENT_DAYS: how long a consent to advertising lives after it was last confirmed. */
  adConsentDays: number
}

export function sendSettings(env: Env, clock: Clock): SendSettings {
  return {
    provider: env.SVC_SMS_PROVIDER,
    prices: { sms: env.SVC_SMS_PRICE_SMS, lms: env.SVC_SMS_PRICE_LMS, alimtalk: env.SVC_SMS_PRICE_ALIMTALK },
    dailyQuota: { limit: env.SVC_SMS_TENANT_DAILY_RECIPIENTS, timeZone: env.SVC_TIME_ZONE },
    maxPerPhone: env.SVC_SMS_MAX_PER_PHONE,
    clock,
    adConsentDays: env.SVC_AD_CONSENT_DAYS,
  }
}

export interface MessageDraft {
  tenantId: number
  senderId: number
  title: string
  content: string
  templateId: number | null
  scheduledAt: Date | null
  recipientGroupId: number | null
  /** Already normalised (stored phone digits). */
  recipients: readonly StoredRecipient[]
  /** Fixed by the kind of send (class sends: GUARDIAN); otherwise inferred from the recipients' roles. */
  recipientType?: string
  purpose: SmsPurpose
  /** An AlimTalk (lib/kakao/alimtalk-send.ts): `content` is then its Kakao template's, unrendered. */
  alimtalk?: AlimtalkDraft | null
}

export interface CreatedMessage {
  message: MessageRecord
  recipients: RecipientRecord[]
}

/**
 * The live provider sends only from an APPROVED number; the mock needs none. Either way
 * the tenant's number, when it has one, is stored on the message at creation.
 */
async function senderNumberFor(trx: TenantTx, provider: SendSettings['provider']): Promise<string | null> {
  const setting = await findSenderSetting(trx)
  if (provider === LIVE_PROVIDER && setting?.registrationStatus !== 'APPROVED') {
    throw new AppError('SENDER_SETTING_NOT_APPROVED')
  }
  return setting?.senderNumber ?? null
}

/** The numbers an advertisement leaves out, each with the status its recipients get: OPTED_OUT wins. */
function leftOutStatuses(terms: AdvertisingTerms | null): Map<string, LeftOutStatus> {
  const statuses = new Map<string, LeftOutStatus>()
  if (terms === null) return statuses
  for (const phone of terms.noConsent) statuses.set(phone, 'NO_CONSENT')
  for (const phone of terms.optedOut) statuses.set(phone, 'OPTED_OUT')
  return statuses
}

/**
 * Stores a PENDING message and all its recipients (two statements whatever the recipient count), then counts them
 * against the tenant's daily quota. Dispatch is not started here: the caller kicks the dispatcher after commit, so
 * the provider never sees uncommitted rows.
 *
 * An advertisement (lib/advertising/advertising-terms.ts) is first held to its rules: outside the quiet hours, with an
 * opt-out number, its recipients on the opt-out list stored OPTED_OUT and (while the tenant requires consent) those
 * without a live consent NO_CONSENT, which no price, size or quota counts.
 *
 * The quota's reservation locks the tenant's counter row until the transaction ends, so it is the transaction's last
 * statement and travels with the commit: a send still at work never makes the tenant's other sends wait. What
 * else the transaction records about the message (the idempotency key, the audit event) goes in `alongside`,
 * before it; a statement the caller sends after this returns is refused (StatementAfterLastError, sms-quota.ts). Beyond the quota the transaction fails (SV020,
 * SMS_QUOTA_EXCEEDED: on PostgreSQL at commit, on the embedded store here), so a refused send leaves nothing behind.
 * A send that no longer fits is refused before it writes anything.
 */
export async function createMessage(
  trx: TenantTx,
  settings: SendSettings,
  draft: MessageDraft,
  alongside?: (message: MessageRecord) => Promise<void>,
): Promise<CreatedMessage> {
  assertRecipientCount(draft.recipients.length)
  const alimtalk = draft.alimtalk ?? null
  // An AlimTalk's recipients are told apart by their rendered texts, as an SMS's are (never an advertisement).
  const personal = alimtalk
    ? mergeRecipients(draft.content, personalise(draft.content, draft.recipients, alimtalk), settings.maxPerPhone, (recipient) => recipient.text)
    : null
  const recipients: readonly StoredRecipient[] = personal ?? mergeRecipients(draft.content, draft.recipients, settings.maxPerPhone)
  const terms: AdvertisingTerms | null =
    draft.purpose === 'ADVERTISEMENT'
      ? await advertisingTerms(trx, draft.tenantId, recipients, draft.scheduledAt ?? settings.clock(), settings.dailyQuota.timeZone, {
          now: settings.clock(),
          consentDays: settings.adConsentDays,
        })
      : null
  const leftOut = leftOutStatuses(terms)
  const sendable = leftOut.size === 0 ? recipients : recipients.filter((recipient) => !leftOut.has(recipient.phone))
  const optedOutCount = leftOut.size === 0 ? 0 : recipients.filter((recipient) => leftOut.get(recipient.phone) === 'OPTED_OUT').length
  const estimate: MessageEstimate = personal
    ? alimtalkEstimate(personal.map((recipient) => recipient.text), settings.prices.alimtalk)
    : estimateMessage(draft.content, sendable, settings.prices, terms ? frameText(terms.frame) : '')
  if (draft.templateId !== null && !(await templateExists(trx, draft.templateId))) {
    throw new AppError('TEMPLATE_NOT_FOUND', `No template ${draft.templateId} in this tenant.`)
  }
  const senderNumber = await senderNumberFor(trx, settings.provider)
  await checkDailyRecipients(trx, draft.tenantId, sendable.length, settings.dailyQuota)
  const message = await insertMessage(trx, {
    tenantId: draft.tenantId,
    senderId: draft.senderId,
    senderNumber,
    recipientType: draft.recipientType ?? inferRecipientType(recipients),
    recipientCount: recipients.length,
    title: draft.title,
    recipientGroupId: draft.recipientGroupId,
    content: draft.content,
    templateId: draft.templateId,
    scheduledAt: draft.scheduledAt,
    messageType: estimate.messageType,
    estimatedSegments: estimate.estimatedSegments,
    unitPrice: estimate.unitPrice,
    totalPrice: estimate.totalPrice,
    provider: settings.provider,
    purpose: draft.purpose,
    adSenderName: terms?.frame.senderName ?? null,
    adOptOutNumber: terms?.frame.optOutNumber ?? null,
    optedOutCount,
    noConsentCount: recipients.length - sendable.length - optedOutCount,
    channel: alimtalk ? 'ALIMTALK' : 'SMS',
    fallback: alimtalk?.fallback ?? null,
    kakaoTemplateId: alimtalk?.kakaoTemplateId ?? null,
    kakaoPfId: alimtalk?.pfId ?? null,
    kakaoProviderTemplateId: alimtalk?.providerTemplateId ?? null,
    kakaoVariables: alimtalk?.variables ?? null,
  })
  const variables = personal?.map((recipient) => recipient.variables)
  await insertRecipients(trx, draft.tenantId, message.id, recipients, leftOut, variables)
  await alongside?.(message)
  await reserveDailyRecipients(trx, draft.tenantId, sendable.length, settings.dailyQuota)
  return {
    message,
    recipients: recipients.map((recipient, index) => ({
      ...recipient,
      recipientIndex: index,
      deliveryStatus: leftOut.get(recipient.phone) ?? ('PENDING' as const),
      deliveredVia: null,
    })),
  }
}
