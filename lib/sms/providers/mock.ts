import type { DeliveryReport } from '../delivery-report.js'
import type { SendRequest, SendResult, SmsProvider } from './provider.js'
import { providerStyleId } from './provider-ids.js'

/**
 * The default provider (docs/provider.md#the-mock-provider): accepts every message and reports every recipient
 * DELIVERED at once. Its reports are applied by the same function the webhook uses, so the mock exercises the real
 * path.
 */
export function createMockProvider(): SmsProvider {
  return {
    name: 'mock',
    async send(request: SendRequest): Promise<SendResult> {
      return {
        kind: 'accepted',
        groupId: providerStyleId('G4V'),
        accepted: request.messages.map((message) => ({
          recipientIndex: message.recipientIndex,
          messageId: providerStyleId('M4V'),
          statusCode: '2000',
        })),
        refused: [],
      }
    },
    reportsFor(request, result): DeliveryReport[] {
      const now = new Date()
      return result.accepted.map((accepted) => ({
        tenantSlug: request.tenantSlug,
        smsId: request.smsId,
        recipientIndex: accepted.recipientIndex,
        messageId: accepted.messageId,
        groupId: result.groupId,
        statusCode: '4000',
        statusMessage: 'delivered',
        dateProcessed: now,
      }))
    },
  }
}
