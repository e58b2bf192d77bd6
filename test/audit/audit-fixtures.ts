import type { AuditEventType } from '../../lib/audit/event-types.js'
import { owner, type TenantRow } from '../support/fixtures.js'

export interface StoredAuditEvent {
  id: number
  type: AuditEventType
  occurredAt: Date
  actorId: number | null
  targetType: string | null
  targetId: string | null
  ipAddress: string | null
  requestId: string | null
  details: Record<string, unknown>
}

/** The tenant's stored events (read as the owner, past RLS), oldest first; optionally of one type. */
export async function storedAuditEvents(tenant: Pick<TenantRow, 'id'>, type?: AuditEventType): Promise<StoredAuditEvent[]> {
  let query = owner()
    .selectFrom('auditEvents')
    .select(['id', 'type', 'occurredAt', 'actorId', 'targetType', 'targetId', 'ipAddress', 'requestId', 'details'])
    .where('tenantId', '=', tenant.id)
  if (type !== undefined) query = query.where('type', '=', type)
  return query.orderBy('id').execute()
}

/** The one event of `type` the tenant has; fails the test when there is none or more than one. */
export async function theAuditEvent(tenant: Pick<TenantRow, 'id'>, type: AuditEventType): Promise<StoredAuditEvent> {
  const events = await storedAuditEvents(tenant, type)
  if (events.length !== 1) throw new Error(`expected one ${type} event, found ${events.length}`)
  return events[0]!
}
