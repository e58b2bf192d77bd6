import type { SmsKind } from '../../../db/schema.js'
import type { DeliveryReport } from '../delivery-report.js'

/**
 * The contract every SMS provider adapter implements. Adapters never touch the database: the dispatcher turns
 * a SendResult into recipient rows, so the mock and the live provider share one code path.
 */

export interface OutgoingSms {
  recipientIndex: number
  to: string
  from: string
  text: string
  type: 'SMS' | 'LMS'
  subject?: string
}

export interface SendRequest {
  tenantSlug: string
  smsId: number
  /** STAFF, or a system message's kind: its text (a one-time code) must never reach a log or a metric. */
  kind: SmsKind
  messages: OutgoingSms[]
}

/**
 * `accepted`: the provider took the call; each sent recipient is in `accepted` (on its way, record its
 * messageId and never resend it) or `refused` (final failure). A recipient in neither list was not confirmed
 * either way. `retryable`: nothing is known to have been sent (network error, timeout, 5xx, 429).
 * `rejected`: any other non-2xx answer, final for the whole message.
 */
export type SendResult =
  | {
      kind: 'accepted'
      groupId: string | null
      accepted: { recipientIndex: number; messageId: string; statusCode: string }[]
      refused: { recipientIndex: number; statusCode: string; statusMessage: string }[]
    }
  | { kind: 'retryable'; error: string }
  | { kind: 'rejected'; error: string }

export interface SmsProvider {
  readonly name: 'mock' | 'extsms'
  send(request: SendRequest): Promise<SendResult>
  /**
   * Delivery reports the provider produces itself once an accepted send is recorded (the mock reports every
   * recipient DELIVERED at once); they go through the same code path as the webhook's. Live providers call the
   * webhook instead and leave this out.
   */
  reportsFor?(request: SendRequest, result: Extract<SendResult, { kind: 'accepted' }>): DeliveryReport[]
}
