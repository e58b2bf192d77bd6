import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../http/response-types.js'
import type { MessageRecord, RecipientRecord } from '../../db/repos/sms-messages.js'
import type { StoredRecipient } from '../../db/schema.js'
import { maskPhone } from './phone.js'

const Time = Type.String({ format: 'date-time' })
const NullableTime = Nullable(Time)
const NullableString = Nullable(Type.String())
const NullableInteger = Nullable(Type.Integer())

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
  deliveryStatus: NullableString,
})
export type RecipientResponse = Static<typeof RecipientResponseSchema>

/** A message in answers; the response schema also guarantees no dispatch internals are ever serialised. */
export const MessageResponseSchema = Type.Object({
  id: Type.Integer(),
  senderId: Type.Integer(),
  senderNumber: NullableString,
  recipientType: Type.String(),
  recipients: Type.Array(RecipientResponseSchema),
  recipientCount: Type.Integer(),
  title: Type.String(),
  recipientGroupId: NullableInteger,
  content: Type.String(),
  templateId: NullableInteger,
  scheduledAt: NullableTime,
  cancelledAt: NullableTime,
  sentAt: NullableTime,
  messageType: StringEnum(['SMS', 'LMS']),
  estimatedSegments: Type.Integer(),
  unitPrice: Type.Integer(),
  totalPrice: Type.Integer(),
  status: Type.String(),
  successCount: Type.Integer(),
  failCount: Type.Integer(),
  createdAt: Time,
  updatedAt: Time,
})
export type MessageResponse = Static<typeof MessageResponseSchema>

const iso = (value: Date | null): string | null => value?.toISOString() ?? null

export function toRecipientResponse(recipient: StoredRecipient & { deliveryStatus?: string | null }): RecipientResponse {
  return {
    phone: maskPhone(recipient.phone),
    name: recipient.name,
    studentId: recipient.studentId,
    className: recipient.className,
    recipientRole: recipient.recipientRole,
    deliveryStatus: recipient.deliveryStatus ?? null,
  }
}

/** The content is returned exactly as stored: placeholders unrendered. */
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
    createdAt: message.createdAt.toISOString(),
    updatedAt: message.updatedAt.toISOString(),
  }
}
