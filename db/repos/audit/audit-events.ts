import { sql } from 'kysely'
import type { AuditEventType, AuditTargetType } from '../../../lib/audit/event-types.js'
import { executeHeld, planOnce } from '../../driver/statement-flags.js'
import type { TenantTx } from '../../tenant-transaction.js'

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
  /** The caller's tenant, which RLS already enforces: named here so the planner sees whose log it reads. */
  tenantId: number
  type?: AuditEventType | undefined
  actorId?: number | undefined
  from?: Date | undefined
  to?: Date | undefined
}

/** An event's place in the log's order (newest first): its instant in microseconds since the epoch, and its id. */
export interface AuditPosition {
  occurredMicros: number
  id: number
}

export interface AuditEventRecord extends AuditPosition {
  type: AuditEventType
  occurredAt: Date
  actorId: number | null
  targetType: AuditTargetType | null
  targetId: string | null
  ipAddress: string | null
  requestId: string | null
  details: Record<string, unknown>
}

/**
 * Every combination of the filters (none, type, actor, both; a time range on top) has an index that yields exactly
 * its events in the log's order (audit_events_recent, _by_type, _by_actor, _by_actor_type): a page and the bounded
 * count read what they answer and nothing else, however long the log. Every statement here runs from its generic
 * plan (planOnce), which takes that index for every value: planned for its values, a type that is most of the log makes
 * audit_events_recent with a filter look as cheap, and where that type is rare among the newest events (the values
 * are correlated with time, which the planner cannot see) the page read thousands of events to find twenty.
 */
function filtered(trx: TenantTx, filter: AuditEventFilter) {
  let query = trx.selectFrom('auditEvents').where('tenantId', '=', filter.tenantId)
  if (filter.actorId !== undefined) query = query.where('actorId', '=', filter.actorId)
  if (filter.type !== undefined) query = query.where('type', '=', filter.type)
  if (filter.from !== undefined) query = query.where('occurredAt', '>=', filter.from)
  if (filter.to !== undefined) query = query.where('occurredAt', '<', filter.to)
  return query
}

// Microseconds, not a Date: timestamps keep them and a Date does not, so a position read back as a Date would
// skip or repeat events that share a millisecond. Both directions are exact for safe integers.
const occurredMicros = sql<number>`(extract(epoch from occurred_at) * 1000000)::int8`
const instantOf = (micros: number) => sql`(timestamptz 'epoch' + ${micros}::float8 * interval '1 microsecond')`

/**
 * `limit` events of the tenant's log (RLS scopes them), newest first, from the newest or just after `after`; ties
 * broken by id, so pages never overlap. After a position the index is entered at that event (a row comparison in the
 * index's own order): the cost is the page's, however deep.
 */
export async function listAuditEvents(
  trx: TenantTx,
  filter: AuditEventFilter,
  after: AuditPosition | undefined,
  limit: number,
): Promise<AuditEventRecord[]> {
  const query = filtered(trx, filter)
    .select(['id', 'type', 'occurredAt', 'actorId', 'targetType', 'targetId', 'ipAddress', 'requestId', 'details'])
    .select(occurredMicros.as('occurredMicros'))
    .orderBy('occurredAt', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .$call(planOnce)
  if (after === undefined) return query.execute()
  return query.where(sql<boolean>`(occurred_at, id) < (${instantOf(after.occurredMicros)}, ${after.id}::int8)`).execute()
}

/**
 * The place of the event `offset` events into the filtered log (0: the newest), or undefined past its end. It walks
 * the filter's index past `offset` entries, reading no event itself (every column it needs is in the index): a page
 * by number costs that walk, then its own events after this place.
 */
export async function auditPositionAt(trx: TenantTx, filter: AuditEventFilter, offset: number): Promise<AuditPosition | undefined> {
  const entry = filtered(trx, filter).select(['id', 'occurredAt']).orderBy('occurredAt', 'desc').orderBy('id', 'desc').offset(offset).limit(1)
  // The microseconds of the one entry kept, computed outside the walk: inside it they were computed for every
  // skipped entry too, which took most of the walk's time.
  return trx
    .selectFrom(entry.as('entry'))
    .select(['id', occurredMicros.as('occurredMicros')])
    .$call(planOnce)
    .executeTakeFirst()
}

/**
 * How many events the filter matches, counting at most `cap + 1` of them: a number above `cap` says "more than
 * cap", at the same cost however long the log. In the pages' order, so it walks the entries of the same index the
 * page does (only its entries: every column it needs is in it) and never a whole table, which a generic plan took
 * for a tenant of unknown size.
 */
export async function countAuditEventsUpTo(trx: TenantTx, filter: AuditEventFilter, cap: number): Promise<number> {
  const capped = filtered(trx, filter).select(sql`1`.as('one')).orderBy('occurredAt', 'desc').orderBy('id', 'desc').limit(cap + 1)
  const row = await trx
    .selectFrom(capped.as('capped'))
    .select(sql<number>`count(*)::int`.as('counted'))
    .$call(planOnce)
    .executeTakeFirstOrThrow()
  return row.counted
}

/**
 * Binds, for the rest of the transaction, who acts and from where, for the events a trigger records rather than the
 * code (svc_forget_phone_verification's PHONE_CHANGED): set_config local to the transaction, so nothing outlives it
 * on a pooled connection.
 */
export async function bindAuditOrigin(
  trx: TenantTx,
  origin: { actorId: number | null; ipAddress: string | null; requestId: string | null },
): Promise<void> {
  // Held: its answer is read by nobody, so the pipelined driver writes it with the update it serves.
  await executeHeld(
    trx,
    sql`select set_config('app.audit_actor', ${origin.actorId === null ? '' : String(origin.actorId)}, true),
               set_config('app.audit_ip', ${origin.ipAddress?.slice(0, 64) ?? ''}, true),
               set_config('app.audit_request', ${origin.requestId ?? ''}, true)`,
  )
}
