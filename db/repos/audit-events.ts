import { sql } from 'kysely'
import type { AuditEventType, AuditTargetType } from '../../lib/audit/event-types.js'
import { executeHeld } from '../driver/statement-flags.js'
import type { TenantTx } from '../tenant-transaction.js'

export interface AuditEventRow {
  tenantId: number
  type: AuditEventType
  actorId: number | null
  targetType: AuditTargetType
  targetId: string | null
  ipAddress: string | null
  requestId: string | null
  details: Record<string, unknown>
}

/**
 * One event, in the caller's transaction: it commits or rolls back with the change it records. It answers nothing,
 * so the pipelined driver holds it and writes it with the transaction's next statement or its commit (executeHeld):
 * an event costs a login or a send no round trip of its own.
 */
export async function insertAuditEvent(trx: TenantTx, row: AuditEventRow): Promise<void> {
  await executeHeld(
    trx,
    sql`
      insert into audit_events (tenant_id, type, actor_id, target_type, target_id, ip_address, request_id, details)
      values (${row.tenantId}, ${row.type}, ${row.actorId}, ${row.targetType}, ${row.targetId}, ${row.ipAddress},
              ${row.requestId}, ${JSON.stringify(row.details)}::jsonb)`,
  )
}

export interface AuditEventFilter {
  type?: AuditEventType | undefined
  actorId?: number | undefined
  from?: Date | undefined
  to?: Date | undefined
}

export interface AuditEventRecord {
  id: number
  type: AuditEventType
  occurredAt: Date
  actorId: number | null
  targetType: AuditTargetType | null
  targetId: string | null
  ipAddress: string | null
  requestId: string | null
  details: Record<string, unknown>
}

function filtered(trx: TenantTx, filter: AuditEventFilter) {
  let query = trx.selectFrom('auditEvents')
  if (filter.type !== undefined) query = query.where('type', '=', filter.type)
  if (filter.actorId !== undefined) query = query.where('actorId', '=', filter.actorId)
  if (filter.from !== undefined) query = query.where('occurredAt', '>=', filter.from)
  if (filter.to !== undefined) query = query.where('occurredAt', '<', filter.to)
  return query
}

/** A page of the tenant's events (RLS scopes them), newest first; ties broken by id so pages never overlap. */
export async function listAuditEvents(
  trx: TenantTx,
  filter: AuditEventFilter,
  page: { offset: number; limit: number },
): Promise<AuditEventRecord[]> {
  return filtered(trx, filter)
    .select(['id', 'type', 'occurredAt', 'actorId', 'targetType', 'targetId', 'ipAddress', 'requestId', 'details'])
    .orderBy('occurredAt', 'desc')
    .orderBy('id', 'desc')
    .offset(page.offset)
    .limit(page.limit)
    .execute()
}

export async function countAuditEvents(trx: TenantTx, filter: AuditEventFilter): Promise<number> {
  const row = await filtered(trx, filter)
    .select(sql<number>`count(*)`.as('total'))
    .executeTakeFirstOrThrow()
  return row.total
}
