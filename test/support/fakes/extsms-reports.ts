import { createHash } from 'node:crypto'

/** Delivery-report webhook bodies as the live provider posts them (docs/provider.md#report-format). */

export interface ReportableMessage {
  messageId: string
  groupId: string
  to: string
  from: string
  type: string
  customFields: Record<string, string>
}

export interface DeliveryReportOptions {
  statusCode?: string
  statusMessage?: string
  /** `{eventDataId, retryCount, data}` when true (the default); the bare report when false. */
  envelope?: boolean
  dateProcessed?: Date
  retryCount?: number
}

const DEFAULT_MESSAGES: Record<string, string> = { '4000': 'delivered', '3000': 'sent to carrier' }

let eventSequence = 0

export function deliveryReport(
  message: ReportableMessage,
  options: DeliveryReportOptions = {},
): Record<string, unknown> {
  const statusCode = options.statusCode ?? '4000'
  const processed = options.dateProcessed ?? new Date()
  const data = {
    messageId: message.messageId,
    groupId: message.groupId,
    type: message.type,
    to: message.to,
    from: message.from,
    statusCode,
    statusMessage: options.statusMessage ?? DEFAULT_MESSAGES[statusCode] ?? 'failed',
    dateProcessed: processed.toISOString(),
    dateReported: new Date(processed.getTime() + 1000).toISOString(),
    customFields: { ...message.customFields },
  }
  if (options.envelope === false) return data
  eventSequence += 1
  return { eventDataId: `EVT${String(eventSequence).padStart(12, '0')}`, retryCount: options.retryCount ?? 0, data }
}

/** The JSON array the provider posts: one report per message. */
export function deliveryReportBody(
  messages: readonly ReportableMessage[],
  options: DeliveryReportOptions = {},
): Record<string, unknown>[] {
  return messages.map((message) => deliveryReport(message, options))
}

/** The `X-Provider-Secret` header value: lowercase hex SHA-1 of the webhook token. */
export function providerSecretHeader(webhookToken: string): string {
  return createHash('sha1').update(webhookToken).digest('hex')
}
