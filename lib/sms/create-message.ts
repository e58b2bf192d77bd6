import { findSenderSetting, LIVE_PROVIDER } from '../../db/repos/sender-settings.js'
import {
  insertMessage,
  insertRecipients,
  templateExists,
  type MessageRecord,
  type RecipientRecord,
} from '../../db/repos/sms-messages.js'
import { reserveDailyRecipients } from '../../db/repos/sms-quota.js'
import type { StoredRecipient } from '../../db/schema.js'
import type { TenantTx } from '../../db/tenant.js'
import type { Env } from '../env.js'
import { AppError } from '../errors.js'
import { assertRecipientCount, mergeRecipients } from './recipients.js'
import { estimateMessage, inferRecipientType } from './sizing.js'

export interface SendSettings {
  provider: Env['SVC_SMS_PROVIDER']
  prices: { sms: number; lms: number }
  /** Recipients per tenant per UTC day; 0 = unlimited. */
  dailyRecipients: number
}

export function sendSettings(env: Env): SendSettings {
  return {
    provider: env.SVC_SMS_PROVIDER,
    prices: { sms: env.SVC_SMS_PRICE_SMS, lms: env.SVC_SMS_PRICE_LMS },
    dailyRecipients: env.SVC_SMS_TENANT_DAILY_RECIPIENTS,
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

/** Whole seconds until the next UTC midnight, when the daily quota starts again (at least 1). */
export function secondsToNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000))
}

/**
 * Stores a PENDING message and all its recipients (two statements whatever the recipient count). Dispatch is
 * not started here: the caller kicks the dispatcher after commit, so the provider never sees uncommitted rows.
 */
export async function createMessage(trx: TenantTx, settings: SendSettings, draft: MessageDraft): Promise<CreatedMessage> {
  assertRecipientCount(draft.recipients.length)
  const recipients = mergeRecipients(draft.content, draft.recipients)
  const estimate = estimateMessage(draft.content, recipients, settings.prices)
  if (draft.templateId !== null && !(await templateExists(trx, draft.templateId))) {
    throw new AppError('TEMPLATE_NOT_FOUND', `No template ${draft.templateId} in this tenant.`)
  }
  const senderNumber = await senderNumberFor(trx, settings.provider)
  // Last check before any row: the refusal rolls back the transaction, so a refused send leaves nothing behind.
  if (!(await reserveDailyRecipients(trx, draft.tenantId, recipients.length, settings.dailyRecipients))) {
    throw new AppError('SMS_QUOTA_EXCEEDED', undefined, { headers: { 'retry-after': String(secondsToNextUtcDay(new Date())) } })
  }
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
  })
  await insertRecipients(trx, draft.tenantId, message.id, recipients)
  return {
    message,
    recipients: recipients.map((recipient, index) => ({ ...recipient, recipientIndex: index, deliveryStatus: 'PENDING' as const })),
  }
}
