import { Type, type Static } from '@sinclair/typebox'
import { Nullable, NullableStringEnum, StringEnum } from '../http/response-types.js'
import type { MessageRecord, RecipientRecord } from '../../db/repos/sms/sms-messages.js'
import type { AlimtalkFallback, DeliveredVia, DeliveryStatus, SmsChannel, SmsPurpose, SmsStatus, StoredRecipient } from '../../db/schema.js'
import { maskPhone } from './phone.js'

const Time = Type.String({ format: 'date-time' })
const NullableTime = Nullable(Time)
const NullableString = Nullable(Type.String())
const NullableInteger = Nullable(Type.Integer())

export const SMS_STATUSES = ['PENDING', 'DISPATCHED', 'SENT', 'FAILED', 'PARTIAL', 'CANCELLED'] as const satisfies readonly SmsStatus[]
const DELIVERY_STATUSES = ['PENDING', 'DISPATCHED', 'DELIVERED', 'FAILED', 'CANCELLED', 'OPTED_OUT', 'NO_CONSENT'] as const satisfies readonly DeliveryStatus[]
export const SMS_PURPOSES = ['INFORMATIONAL', 'ADVERTISEMENT'] as const satisfies readonly SmsPurpose[]
export const SMS_CHANNELS = ['SMS', 'ALIMTALK'] as const satisfies readonly SmsChannel[]
export const ALIMTALK_FALLBACKS = ['SMS', 'NONE'] as const satisfies readonly AlimtalkFallback[]
const DELIVERED_VIA = ['ALIMTALK', 'SMS', 'LMS'] as const satisfies readonly DeliveredVia[]

// The response mappers below assign the stored types to these enums, so a new stored value fails to compile here.
const SmsStatusSchema = StringEnum(SMS_STATUSES, { $id: 'SmsStatus' })
export const SmsPurposeSchema = StringEnum(SMS_PURPOSES, {
  $id: 'SmsPurpose',
  description: 'ADVERTISEMENT is framed with (광고), the academy name and the opt-out number, kept out of 21:00-08:00 and off the opt-out list (docs/api.md#advertising)',
})
export const SmsChannelSchema = StringEnum(SMS_CHANNELS, {
  $id: 'SmsChannel',
  description: 'ALIMTALK: a KakaoTalk notice from an imported template, falling back to SMS or LMS (docs/api.md#sending-alimtalk)',
})
const DeliveredViaSchema = NullableStringEnum(DELIVERED_VIA, {
  $id: 'DeliveredVia',
  description: 'How a delivered recipient got it: ALIMTALK, or SMS/LMS by the fallback; null until the provider reports it',
})
const DeliveryStatusSchema = NullableStringEnum(DELIVERY_STATUSES, {
  $id: 'DeliveryStatus',
  description: "A recipient's delivery; null for recipient group members, which are an address book, not deliveries",
})

const exampleRecipient = {
  phone: '010-****-5678',
  name: 'Kim',
  studentId: null,
  className: null,
  recipientRole: null,
  deliveryStatus: 'PENDING',
  deliveredVia: null,
}
const sentAtCreation = '2026-11-23T09:00:00.000Z'
// README "Try it": the first send, as it answers before the mock provider settles it.
const exampleMessage = {
  id: 1,
  senderId: 1,
  senderNumber: null,
  recipientType: 'CUSTOM',
  recipients: [exampleRecipient],
  recipientCount: 1,
  title: 'Hello',
  recipientGroupId: null,
  content: 'Hello {name}',
  templateId: null,
  scheduledAt: null,
  cancelledAt: null,
  sentAt: null,
  messageType: 'SMS',
  estimatedSegments: 1,
  unitPrice: 20,
  totalPrice: 20,
  status: 'PENDING',
  successCount: 0,
  failCount: 0,
  purpose: 'INFORMATIONAL',
  optedOutCount: 0,
  noConsentCount: 0,
  channel: 'SMS',
  fallback: null,
  kakaoTemplateId: null,
  createdAt: sentAtCreation,
  updatedAt: sentAtCreation,
}

/**
 * A recipient in answers: the phone is always masked (`010-****-5678`). `deliveryStatus` is null for group
 * members, which are an address book, not deliveries.
 */
export const RecipientResponseSchema = Type.Object({
  phone: Type.String(),
  name: NullableString,
  studentId: NullableInteger,
  className: NullableString,
  recipientRole: NullableString,
  deliveryStatus: DeliveryStatusSchema,
  deliveredVia: DeliveredViaSchema,
}, { $id: 'SmsRecipient', examples: [exampleRecipient] })
export type RecipientResponse = Static<typeof RecipientResponseSchema>

/** A message in answers; the response schema also guarantees no dispatch internals are ever serialised. */
export const MessageResponseSchema = Type.Object({
  id: Type.Integer(),
  senderId: Type.Integer(),
  senderNumber: NullableString,
  // Free text: the recipients' common recipientRole (any string a send gives), so no enum can list it.
  recipientType: Type.String({
    description: "The recipients' common recipientRole (GUARDIAN for class sends), CUSTOM when they differ or have none",
    examples: ['GUARDIAN', 'CUSTOM'],
  }),
  recipients: Type.Array(RecipientResponseSchema),
  recipientCount: Type.Integer(),
  title: Type.String(),
  recipientGroupId: NullableInteger,
  content: Type.String(),
  templateId: NullableInteger,
  scheduledAt: NullableTime,
  cancelledAt: NullableTime,
  sentAt: NullableTime,
  messageType: StringEnum(['SMS', 'LMS'], { $id: 'SmsMessageType' }),
  estimatedSegments: Type.Integer(),
  unitPrice: Type.Integer(),
  totalPrice: Type.Integer(),
  status: SmsStatusSchema,
  successCount: Type.Integer(),
  failCount: Type.Integer(),
  purpose: SmsPurposeSchema,
  optedOutCount: Type.Integer({ description: 'Recipients left out as OPTED_OUT: never sent, not priced, not in the quota' }),
  noConsentCount: Type.Integer({
    description: 'Recipients of an advertisement left out as NO_CONSENT (no live consent): never sent, not priced, not in the quota',
  }),
  channel: SmsChannelSchema,
  fallback: NullableStringEnum(ALIMTALK_FALLBACKS, { description: 'ALIMTALK only (null for SMS): SMS or NONE' }),
  kakaoTemplateId: Nullable(Type.Integer({ description: 'ALIMTALK only (null for SMS): the Kakao template sent' })),
  createdAt: Time,
  updatedAt: Time,
}, { $id: 'SmsMessage', examples: [exampleMessage] })
export type MessageResponse = Static<typeof MessageResponseSchema>

const iso = (value: Date | null): string | null => value?.toISOString() ?? null

export function toRecipientResponse(
  recipient: StoredRecipient & { deliveryStatus?: DeliveryStatus | null; deliveredVia?: DeliveredVia | null },
): RecipientResponse {
  return {
    phone: maskPhone(recipient.phone),
    name: recipient.name,
    studentId: recipient.studentId,
    className: recipient.className,
    recipientRole: recipient.recipientRole,
    deliveryStatus: recipient.deliveryStatus ?? null,
    deliveredVia: recipient.deliveredVia ?? null,
  }
}

/** The content is returned exactly as stored: placeholders unrendered (an AlimTalk's: the template's, `#{name}`). */
export function toMessageResponse(message: MessageRecord, recipients: readonly RecipientRecord[]): MessageResponse {
  return {
    id: message.id,
    senderId: message.senderId,
    senderNumber: message.senderNumber,
    recipientType: message.recipientType,
    recipients: recipients.map(toRecipientResponse),
    recipientCount: message.recipientCount,
    title: message.title,
    recipientGroupId: message.recipientGroupId,
    content: message.content,
    templateId: message.templateId,
    scheduledAt: iso(message.scheduledAt),
    cancelledAt: iso(message.cancelledAt),
    sentAt: iso(message.sentAt),
    messageType: message.messageType,
    estimatedSegments: message.estimatedSegments,
    unitPrice: message.unitPrice,
    totalPrice: message.totalPrice,
    status: message.status,
    successCount: message.successCount,
    failCount: message.failCount,
    purpose: message.purpose,
    optedOutCount: message.optedOutCount,
    noConsentCount: message.noConsentCount,
    channel: message.channel,
    fallback: message.fallback,
    kakaoTemplateId: message.kakaoTemplateId,
    createdAt: message.createdAt.toISOString(),
    updatedAt: message.updatedAt.toISOString(),
  }
}
