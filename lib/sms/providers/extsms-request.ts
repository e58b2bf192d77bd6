import { truncateToBytes } from '../sizing.js'
import type { OutgoingSms, SendRequest } from './provider.js'

/** The JSON body of `POST /messages/v4/send-many/detail` (docs/provider.md#sending). */

export const MAX_MESSAGES_PER_CALL = 10_000
const SUBJECT_MAX_BYTES = 40

export interface ExtSmsMessage {
  to: string
  from: string
  text: string
  type: 'SMS' | 'LMS'
  subject?: string
  customFields: { svcTenant: string; svcSmsId: string; svcRecipient: string }
}

export interface ExtSmsSendBody {
  messages: ExtSmsMessage[]
  allowDuplicates: true
  showMessageList: true
}

/**
 * One call carries 1 to 10,000 messages. Larger sends are not split here: SendResult cannot say "the first
 * chunk went out, retry only the rest", and a partial retry decided inside the adapter could resend accepted
 * recipients. The dispatcher sends in batches (SVC_SMS_BATCH_SIZE) far below the limit, so a bigger request is a
 * programming error. Recipient indexes must be unique because results are matched back by index.
 */
export function assertSendable(request: SendRequest): void {
  const count = request.messages.length
  if (count === 0 || count > MAX_MESSAGES_PER_CALL) {
    throw new RangeError(`extsms send needs 1 to ${MAX_MESSAGES_PER_CALL} messages, got ${count}`)
  }
  const indexes = new Set(request.messages.map((message) => message.recipientIndex))
  if (indexes.size !== count) throw new RangeError('extsms send got a recipientIndex twice')
}

function toProviderMessage(request: SendRequest, message: OutgoingSms): ExtSmsMessage {
  const customFields = {
    svcTenant: request.tenantSlug,
    svcSmsId: String(request.smsId),
    svcRecipient: String(message.recipientIndex),
  }
  const base = { to: message.to, from: message.from, text: message.text, type: message.type }
  // The provider refuses a subject on SMS and one over 40 bytes on LMS; cutting it beats failing the message.
  if (message.type === 'LMS' && message.subject) {
    return { ...base, subject: truncateToBytes(message.subject, SUBJECT_MAX_BYTES), customFields }
  }
  return { ...base, customFields }
}

export function sendBody(request: SendRequest): ExtSmsSendBody {
  return {
    messages: request.messages.map((message) => toProviderMessage(request, message)),
    allowDuplicates: true,
    showMessageList: true,
  }
}
