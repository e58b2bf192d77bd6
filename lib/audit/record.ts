import { insertAuditEvent } from '../../db/repos/audit/audit-events.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { TARGET_OF, type AuditEventType } from './event-types.js'

/**
 * What an event may say about the change, besides its type and target: flat values only, so what an event can
 * carry stays visible at the call. Never a password, code, token, secret or whole phone number (maskPhone).
 */
export type AuditDetails = Record<string, string | number | boolean | null | readonly string[]>

export interface AuditEvent {
  type: AuditEventType
  /** The id of what changed, of the type's target type (TARGET_OF); null when there is none. */
  targetId: string | number | null
  details?: AuditDetails
}

/** Who acted and from where: the signed-in user (null: anonymous, a signed operations call, a script). */
export interface AuditOrigin {
  actorId: number | null
  ipAddress: string | null
  requestId: string | null
  /** The API key the actor acted through (its id lands in every event's details as `apiKeyId`); absent otherwise. */
  apiKeyId?: number | null
}

/** An origin with nothing known: work outside any request (the in-process contract, scripts). */
export const NO_ORIGIN: AuditOrigin = { actorId: null, ipAddress: null, requestId: null }

/**
 * Writes the event in `trx`, the transaction of the change it records: no event for a change that rolls back, and
 * none lost for one that commits. Call it in the same transaction as the change, never after the commit.
 */
export async function recordAuditEvent(trx: TenantTx, tenantId: number, origin: AuditOrigin, event: AuditEvent): Promise<void> {
  await insertAuditEvent(trx, {
    tenantId,
    type: event.type,
    actorId: origin.actorId,
    targetType: TARGET_OF[event.type],
    targetId: event.targetId === null ? null : String(event.targetId),
    ipAddress: origin.ipAddress?.slice(0, 64) ?? null,
    requestId: origin.requestId,
    // Whatever the event, a change made through an API key says which key (docs/api.md#api-keys).
    details: origin.apiKeyId != null ? { ...event.details, apiKeyId: origin.apiKeyId } : (event.details ?? {}),
  })
}
