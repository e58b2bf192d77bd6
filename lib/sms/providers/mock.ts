import type { FastifyBaseLogger } from 'fastify'
import type { DeliveryReport } from '../delivery-report.js'
import { maskPhone } from '../phone.js'
import type { SendRequest, SendResult, SmsProvider } from './provider.js'
import { providerStyleId } from './provider-ids.js'

export interface MockProviderOptions {
  /**
   * Where the text of system messages (one-time codes) is written, so a developer can try the flows that send
   * them: the one log line that ever carries such a text. Given only with NODE_ENV=development (providers/index.ts).
   */
  revealSystemTextTo?: FastifyBaseLogger
}

/**
 * The default provider (docs/provider.md#the-mock-provider): accepts every message and reports every recipient
 * DELIVERED at once. Its reports are applied by the same function the webhook uses, so the mock exercises the real
 * path.
 */
export function createMockProvider(options: MockProviderOptions = {}): SmsProvider {
  const reveal = options.revealSystemTextTo
  return {
    name: 'mock',
    async send(request: SendRequest): Promise<SendResult> {
      if (reveal && request.kind !== 'STAFF') {
        for (const message of request.messages) {
          reveal.info(
            { smsId: request.smsId, kind: request.kind, to: maskPhone(message.to), text: message.text },
            'system SMS taken by the mock provider (shown with NODE_ENV=development only)',
          )
        }
      }
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
