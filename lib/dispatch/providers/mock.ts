import type { FastifyBaseLogger } from 'fastify'
import type { DeliveryReport } from '../delivery/delivery-report.js'
import { maskPhone } from '../../sms/phone.js'
import type { GroupEntry, OutgoingSms, SmsProvider } from './provider.js'
import { providerStyleId } from './provider-ids.js'

export interface MockProviderOptions {
  /**
   * Where the text of system messages (one-time codes) is written, so a developer can try the flows that send
   * them: the one log line that ever carries such a text. Given only with NODE_ENV=development (providers/index.ts).
   */
  revealSystemTextTo?: FastifyBaseLogger
}

interface MockGroup {
  sent: boolean
  entries: GroupEntry[]
  /** Each taken recipient's message type, which its report names: `ATA` for an AlimTalk notice. */
  types: Map<number, OutgoingSms['type']>
}

/**
 * The default provider (docs/provider.md#the-mock-provider): speaks the group API in memory, takes every message
 * and reports every recipient DELIVERED at once. Its reports are applied by the same function the webhook uses, so
 * the mock exercises the real path. Its groups live as long as the process: a group another process created reads
 * back as missing, so a development instance that died mid-attempt sends that attempt's recipients again.
 */
export function createMockProvider(options: MockProviderOptions = {}): SmsProvider {
  const reveal = options.revealSystemTextTo
  const groups = new Map<string, MockGroup>()
  const unknownGroup = (groupId: string) => ({ kind: 'rejected' as const, error: `no group ${groupId}` })
  return {
    name: 'mock',
    callTimeoutMs: 0,
    async createGroup() {
      const groupId = providerStyleId('G4V')
      groups.set(groupId, { sent: false, entries: [], types: new Map() })
      return { kind: 'ok', groupId }
    },
    async addMessages(groupId, request) {
      const group = groups.get(groupId)
      if (!group || group.sent) return unknownGroup(groupId)
      if (reveal && request.kind !== 'STAFF') {
        for (const message of request.messages) {
          reveal.info(
            { smsId: request.smsId, kind: request.kind, to: maskPhone(message.to), text: message.text },
            'system SMS taken by the mock provider (shown with NODE_ENV=development only)',
          )
        }
      }
      const entries = request.messages.map((message) => ({
        recipientIndex: message.recipientIndex,
        messageId: providerStyleId('M4V'),
        statusCode: '2000',
        statusMessage: 'accepted',
      }))
      group.entries.push(...entries)
      for (const message of request.messages) group.types.set(message.recipientIndex, message.type)
      return { kind: 'ok', entries }
    },
    async sendGroup(groupId) {
      const group = groups.get(groupId)
      if (!group || group.sent) return unknownGroup(groupId)
      group.sent = true
      return { kind: 'ok' }
    },
    async readGroup(groupId, recipients) {
      const group = groups.get(groupId)
      if (!group) return { kind: 'missing' }
      const asked = new Set(recipients.map((recipient) => recipient.recipientIndex))
      return { kind: 'ok', sent: group.sent, entries: group.entries.filter((entry) => asked.has(entry.recipientIndex)) }
    },
    async afterRecorded({ owner, groupId, taken }, report) {
      // A sent group is only read back after its answer was lost; forgetting it once reported keeps memory flat.
      const types = groups.get(groupId)?.types
      groups.delete(groupId)
      const now = new Date()
      const reports: DeliveryReport[] = taken.map((entry) => ({
        tenantSlug: owner.tenantSlug,
        smsId: owner.smsId,
        recipientIndex: entry.recipientIndex,
        messageId: entry.messageId!,
        groupId,
        statusCode: '4000',
        statusMessage: 'delivered',
        dateProcessed: now,
        // Kakao delivers every AlimTalk notice here: reported as the live provider reports one, type ATA.
        type: types?.get(entry.recipientIndex) ?? 'SMS',
      }))
      await report(reports)
    },
  }
}
