import { findSenderSetting, LIVE_PROVIDER } from '../../db/repos/sms/sender-settings.js'
import { insertSystemMessage } from '../../db/repos/sms/sms-messages.js'
import { checkDailyRecipients, reserveDailyRecipients } from '../../db/repos/sms/sms-quota.js'
import type { SmsKind } from '../../db/schema.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { systemClock } from '../clock.js'
import type { Env } from '../env.js'
import { AppError } from '../errors.js'
import { sendSettings, type SendSettings } from '../sms/create-message.js'
import { normalizePhone } from '../sms/phone.js'
import { isEucKrText, LMS_MAX_BYTES, SMS_MAX_BYTES, smsByteLength } from '../sms/sizing.js'

/**
 * The service's own SMS (a one-time code), as opposed to a staff member's send. It goes through the same outbox,
 * dispatcher, leases, retries and provider adapter as bulk sends; what differs is decided by its kind:
 * - it has no sender user and is never listed in the history, its detail or its totals;
 * - its text is sent as written (no placeholders) and never logged or put in a metric; the stored text is erased
 *   once the message leaves PENDING (the provider has it, or it failed or expired), so a code cannot be read back
 *   from the database after it was sent; a retry still has it;
 * - with `expiresAt`, it is never handed to the provider after that moment: it ends FAILED, saying it expired.
 * Like a bulk message, it is held while its tenant is not ACTIVE (and ends FAILED once expired). Its sender number is
 * decided here, when it is stored: from SVC_SMS_SYSTEM_SENDER it does not wait for the tenant's number; from the
 * tenant's APPROVED number it is held, like a bulk message, once that number is rejected or replaced.
 */

export type SystemSmsKind = Exclude<SmsKind, 'STAFF'>

export interface SystemSmsSettings extends SendSettings {
  /** SVC_SMS_SYSTEM_SENDER, national digits; null: the tenant's APPROVED sender number. */
  systemSender: string | null
}

export function systemSmsSettings(env: Env): SystemSmsSettings {
  // A system message is never an advertisement, so no rule of it depends on the time of day.
  return { ...sendSettings(env, systemClock), systemSender: env.SVC_SMS_SYSTEM_SENDER ?? null }
}

export interface SystemSms {
  tenantId: number
  /** The recipient's phone as given (normalised here; an invalid one is INVALID_PHONE_NUMBER, never echoed). */
  to: string
  text: string
  kind: SystemSmsKind
  /** Not handed to the provider after this moment; a code is useless once it has expired. */
  expiresAt?: Date
}

/**
 * SVC_SMS_SYSTEM_SENDER, else the tenant's APPROVED number. The live provider refuses a message without a
 * registered sender, so with neither it is refused here (SENDER_SETTING_NOT_APPROVED) rather than stored to fail;
 * the mock needs none.
 */
async function senderNumberFor(trx: TenantTx, settings: SystemSmsSettings): Promise<string | null> {
  if (settings.systemSender !== null) return settings.systemSender
  const setting = await findSenderSetting(trx)
  if (setting?.registrationStatus === 'APPROVED') return setting.senderNumber
  if (settings.provider === LIVE_PROVIDER) throw new AppError('SENDER_SETTING_NOT_APPROVED')
  return null
}

/** SMS or LMS for the text exactly as it will be sent; the text itself never goes into the error. */
function messageTypeOf(text: string): 'SMS' | 'LMS' {
  const bytes = smsByteLength(text)
  if (bytes > LMS_MAX_BYTES) {
    throw new AppError('CONTENT_TOO_LONG', `The message is ${bytes} bytes; the limit is ${LMS_MAX_BYTES} bytes.`)
  }
  return bytes <= SMS_MAX_BYTES && isEucKrText(text) ? 'SMS' : 'LMS'
}

/**
 * Stores one system SMS with its one recipient, due at once, and counts that recipient against the tenant's daily
 * quota; returns the message id. As with a bulk send, the provider is never called here: after the caller's
 * commit, kick the dispatcher (`request.afterCommit(() => app.dispatcher.kick())`) so it goes out without waiting
 * for the scheduler's tick.
 *
 * The quota's reservation is this function's last statement and locks the tenant's counter row until the
 * transaction ends, so it is the transaction's last: a statement after this returns is refused
 * (StatementAfterLastError, db/repos/sms/sms-quota.ts). Beyond the quota the transaction fails (SV020, answered
 * as SMS_QUOTA_EXCEEDED), and nothing is kept.
 */
export async function enqueueSystemSms(trx: TenantTx, settings: SystemSmsSettings, sms: SystemSms): Promise<number> {
  const { tenantId, ...one } = sms
  const [id] = await enqueueSystemSmsBatch(trx, settings, tenantId, [one])
  return id!
}

/**
 * Several system SMS of one tenant, as enqueueSystemSms stores one, counted against the quota together. What else
 * the transaction records about them goes in `alongside` (given their ids, in order), before the reservation, which
 * is still the transaction's last statement.
 */
export async function enqueueSystemSmsBatch(
  trx: TenantTx,
  settings: SystemSmsSettings,
  tenantId: number,
  list: readonly Omit<SystemSms, 'tenantId'>[],
  alongside?: (ids: number[]) => Promise<void>,
): Promise<number[]> {
  if (list.length === 0) return []
  const prepared = list.map((sms) => {
    if (sms.text === '') throw new RangeError('a system SMS needs a text')
    const messageType = messageTypeOf(sms.text)
    const phone = normalizePhone(sms.to)
    if (phone === null) throw new AppError('INVALID_PHONE_NUMBER', 'The recipient is not a valid phone number.')
    return { sms, messageType, phone }
  })
  const senderNumber = await senderNumberFor(trx, settings)
  await checkDailyRecipients(trx, tenantId, list.length, settings.dailyQuota)
  const ids: number[] = []
  for (const { sms, messageType, phone } of prepared) {
    ids.push(
      await insertSystemMessage(trx, {
        tenantId,
        kind: sms.kind,
        phone,
        senderNumber,
        // Never shown to anyone; an empty title also keeps an LMS without a subject line.
        title: '',
        content: sms.text,
        messageType,
        unitPrice: messageType === 'SMS' ? settings.prices.sms : settings.prices.lms,
        provider: settings.provider,
        discardAfter: sms.expiresAt ?? null,
      }),
    )
  }
  await alongside?.(ids)
  await reserveDailyRecipients(trx, tenantId, list.length, settings.dailyQuota)
  return ids
}
