import { LMS_SUBJECT_MAX_BYTES, truncateToBytes } from '../../sms/sizing.js'
import type { OutgoingSms, SendRequest } from './provider.js'

/** The JSON bodies of the group API's calls (docs/provider.md#sending). */

export const MAX_MESSAGES_PER_CALL = 10_000

interface CustomFields {
  svcTenant: string
  svcSmsId: string
  svcRecipient: string
}

/** A message of send-many or a group's add call; `kakaoOptions` only on an AlimTalk notice (`ATA`). */
export type ExtSmsMessage =
  | { to: string; from: string; text: string; type: 'SMS' | 'LMS'; subject?: string; customFields: CustomFields }
  | {
      to: string
      from: string
      text: string
      type: 'ATA'
      kakaoOptions: { pfId: string; templateId: string; variables: Record<string, string>; disableSms?: true }
      customFields: CustomFields
    }

export interface ExtSmsAddBody {
  messages: ExtSmsMessage[]
}

/** Siblings can share a guardian's phone: two messages of one send to one number are not duplicates. */
export const CREATE_GROUP_BODY = { allowDuplicates: true } as const

/**
 * One add call carries 1 to 10,000 messages. Larger requests are not split here: a message's recipients go in one
 * call (a send holds at most 10,000), so a bigger request is a programming error. Recipient indexes must be unique
 * because answers are matched back by index.
 */
export function assertSendable(request: SendRequest): void {
  const count = request.messages.length
  if (count === 0 || count > MAX_MESSAGES_PER_CALL) {
    throw new RangeError(`an extsms add call needs 1 to ${MAX_MESSAGES_PER_CALL} messages, got ${count}`)
  }
  const indexes = new Set(request.messages.map((message) => message.recipientIndex))
  if (indexes.size !== count) throw new RangeError('an extsms add call got a recipientIndex twice')
}

function toProviderMessage(request: SendRequest, message: OutgoingSms): ExtSmsMessage {
  const customFields = {
    svcTenant: request.tenantSlug,
    svcSmsId: String(request.smsId),
    svcRecipient: String(message.recipientIndex),
  }
  if (message.type === 'ATA') {
    const { pfId, templateId, variables, disableSms } = message.kakao
    // disableSms only when set: absent, the provider falls back to SMS or LMS from `from` (its default).
    const kakaoOptions = disableSms ? { pfId, templateId, variables, disableSms: true as const } : { pfId, templateId, variables }
    return { to: message.to, from: message.from, text: message.text, type: 'ATA', kakaoOptions, customFields }
  }
  // The provider refuses a subject on SMS and one over 40 bytes on LMS; cutting it beats failing the message.
  if (message.type === 'LMS' && message.subject) {
    const subject = truncateToBytes(message.subject, LMS_SUBJECT_MAX_BYTES)
    return { to: message.to, from: message.from, text: message.text, type: message.type, subject, customFields }
  }
  return { to: message.to, from: message.from, text: message.text, type: message.type, customFields }
}

export function addBody(request: SendRequest): ExtSmsAddBody {
  return { messages: request.messages.map((message) => toProviderMessage(request, message)) }
}
