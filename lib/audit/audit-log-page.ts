import {
  auditPositionAt,
  countAuditEventsUpTo,
  listAuditEvents,
  type AuditEventFilter,
  type AuditEventRecord,
  type AuditPosition,
} from '../../db/repos/audit/audit-events.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import type { AuditEventPage } from './audit-event-response.js'
import { encodeAuditCursor, type AuditCursor } from './audit-cursor.js'

/**
 * The total is exact up to this many events and says "at least" beyond: counting the whole log cost every page the
 * log's length (a page took 396 ms at 300,000 events), while this many index entries cost about a millisecond.
 */
export const AUDIT_TOTAL_CAP = 10_000

/** A page by number (`page` x `size` events in), or after a cursor of an earlier answer. */
export type AuditPageRequest = { page: number; size: number; cursor?: AuditCursor | undefined }

function item({ occurredMicros: _position, ...record }: AuditEventRecord) {
  return { ...record, occurredAt: record.occurredAt.toISOString() }
}

/**
 * Where the page starts: after the cursor's event; for page N > 0 by number, after the last event of page N - 1,
 * found through the index alone (null past the end of the log); the first page from the newest event.
 */
async function startOf(trx: TenantTx, filter: AuditEventFilter, request: AuditPageRequest): Promise<AuditPosition | null | undefined> {
  if (request.cursor) return request.cursor
  if (request.page === 0) return undefined
  return (await auditPositionAt(trx, filter, request.page * request.size - 1)) ?? null
}

/**
 * One page of the tenant's audit log. One event more than the page is read, so `hasNext` is exact whatever the
 * total says, and the page's last event becomes the next page's cursor.
 */
export async function readAuditLogPage(trx: TenantTx, filter: AuditEventFilter, request: AuditPageRequest): Promise<AuditEventPage> {
  const { size, cursor } = request
  const page = cursor?.page ?? request.page
  const start = await startOf(trx, filter, request)
  const records = start === null ? [] : await listAuditEvents(trx, filter, start, size + 1)
  const counted = await countAuditEventsUpTo(trx, filter, AUDIT_TOTAL_CAP)
  const shown = records.slice(0, size)
  const hasNext = records.length > size
  const last = shown.at(-1)
  const total = Math.min(counted, AUDIT_TOTAL_CAP)
  return {
    items: shown.map(item),
    page,
    perPage: size,
    total,
    totalExact: counted <= AUDIT_TOTAL_CAP,
    totalPages: Math.ceil(total / size),
    hasNext,
    nextCursor: hasNext && last ? encodeAuditCursor({ page: page + 1, occurredMicros: last.occurredMicros, id: last.id }) : null,
  }
}
