import { sql, type Kysely, type SelectQueryBuilder } from 'kysely'
import { precompiled } from '../../driver/precompiled.js'
import { planOnce, planPerExecution } from '../../driver/statement-flags.js'
import type { DB, SmsChannel, SmsPurpose, SmsStatus } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'
import type { MessageScope } from './sms-messages.js'

export interface HistoryFilter extends MessageScope {
  tenantId: number
  status?: SmsStatus
  recipientType?: string
  purpose?: SmsPurpose
  channel?: SmsChannel
  /** Matched literally (case-insensitive) inside the title or the content. */
  q?: string
}

export type HistorySortField = 'createdAt' | 'sentAt' | 'status'

export interface HistorySort {
  field: HistorySortField
  direction: 'asc' | 'desc'
}

/** The values of one page query; which of them the SQL uses depends on the query's shape. */
interface PageParams {
  tenantId: number
  senderId: number | undefined
  status: SmsStatus | undefined
  recipientType: string | undefined
  purpose: SmsPurpose | undefined
  channel: SmsChannel | undefined
  pattern: string
  previewLength: number
  offset: number
  limit: number
}

/** What changes the SQL text of a page query (never the values themselves). */
interface PageShape {
  sort: HistorySort
  bySender: boolean
  byStatus: boolean
  byRecipientType: boolean
  byPurpose: boolean
  byChannel: boolean
  bySearch: boolean
}

/** `%`, `_` and the escape character itself are data here, not patterns. */
function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (char) => `\\${char}`)}%`
}

/**
 * ISO 8601 in UTC with milliseconds, as `Date.prototype.toISOString` writes it (both truncate the microseconds).
 * `column` is a fixed column name of sms_messages, never input.
 */
const isoText = (column: string) =>
  sql.raw(`to_char(sms_messages.${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)

/**
 * One history item exactly as the API answers it (MessageResponseSchema, in its order, `recipients` always empty):
 * each alias is a JSON key, so `row_to_json(item)` is the item's JSON text. PostgreSQL writes it in C, and Node
 * passes 20 short strings through instead of parsing 20 x 21 columns, mapping them to camelCase, copying the objects
 * and serialising them again: most of a page's CPU in the service. Raw SQL because the CamelCasePlugin would rename
 * the aliases. The content is cut in SQL (left() counts characters, i.e. code points): list items never show it all.
 */
const itemProjection = (previewLength: number) =>
  sql`(select
      sms_messages.id,
      sms_messages.sender_id as "senderId",
      sms_messages.sender_number as "senderNumber",
      sms_messages.recipient_type as "recipientType",
      '[]'::json as recipients,
      sms_messages.recipient_count as "recipientCount",
      sms_messages.title,
      sms_messages.recipient_group_id as "recipientGroupId",
      left(sms_messages.content, ${previewLength}) as content,
      sms_messages.template_id as "templateId",
      ${isoText('scheduled_at')} as "scheduledAt",
      ${isoText('cancelled_at')} as "cancelledAt",
      ${isoText('sent_at')} as "sentAt",
      sms_messages.message_type as "messageType",
      sms_messages.estimated_segments as "estimatedSegments",
      sms_messages.unit_price as "unitPrice",
      sms_messages.total_price as "totalPrice",
      sms_messages.status,
      sms_messages.success_count as "successCount",
      sms_messages.fail_count as "failCount",
      sms_messages.purpose,
      sms_messages.opted_out_count as "optedOutCount",
      sms_messages.no_consent_count as "noConsentCount",
      sms_messages.channel,
      sms_messages.fallback,
      sms_messages.kakao_template_id as "kakaoTemplateId",
      ${isoText('created_at')} as "createdAt",
      ${isoText('updated_at')} as "updatedAt")`.as('item')

/**
 * RLS already limits rows to the tenant, but through an InitPlan whose value the planner cannot see: it would
 * plan every tenant as an average one (a sequential scan for a small tenant sorted by sentAt). Naming the tenant
 * as a parameter lets it plan for this tenant's actual size. Only staff messages are history: a system message (a
 * one-time code) is never listed, and the trigger-kept totals leave it out as well.
 */
function filtered<O>(query: SelectQueryBuilder<DB, 'smsMessages', O>, shape: PageShape, params: PageParams) {
  // Qualified: the page's item projection has columns of the same names (title, content, status).
  let result = query.where('smsMessages.tenantId', '=', params.tenantId).where('smsMessages.kind', '=', sql.lit('STAFF'))
  if (shape.bySender) result = result.where('smsMessages.senderId', '=', params.senderId!)
  if (shape.byStatus) result = result.where('smsMessages.status', '=', params.status!)
  if (shape.byRecipientType) result = result.where('smsMessages.recipientType', '=', params.recipientType!)
  if (shape.byPurpose) result = result.where('smsMessages.purpose', '=', params.purpose!)
  if (shape.byChannel) result = result.where('smsMessages.channel', '=', params.channel!)
  if (shape.bySearch) {
    result = result.where((eb) =>
      eb.or([
        eb(sql`sms_messages.title`, 'ilike', sql`${params.pattern} escape '\\'`),
        eb(sql`sms_messages.content`, 'ilike', sql`${params.pattern} escape '\\'`),
      ]),
    )
  }
  return result
}

const unfiltered = (shape: PageShape) =>
  !shape.byStatus && !shape.byRecipientType && !shape.byPurpose && !shape.byChannel && !shape.bySearch

/**
 * Whether one index yields this page's rows in order for any tenant: (tenant_id, created_at, id),
 * (tenant_id, sent_at, id) and (tenant_id, status, id), merged across the monthly partitions of sms_messages. Such a
 * page's only sensible plan is that index walk, so its statement runs from its generic plan (planOnce). Any
 * other shape is planned per execution, for the values it serves: a generic plan sees neither the tenant's size nor
 * how selective a filter is. That includes one instructor's own pages: a generic plan, which assumes an average
 * tenant's sender, sorts all of a sender's rows from every partition rather than merge each partition's index walk.
 */
function servedByAnIndex(shape: PageShape): boolean {
  return unfiltered(shape) && !shape.bySender
}

/**
 * One page of history in one statement, each row one item's JSON text (the lateral projection is flattened into
 * the index scan: same plan, no sort). The id breaks ties so pages never overlap or skip rows; sentAt puts unsent
 * messages last in both directions. Without filters, every row also carries the total from
 * the trigger-kept per-sender counters, so the common page needs no second query.
 */
function buildPage(db: Kysely<DB>, shape: PageShape, params: PageParams) {
  const { sort } = shape
  const query = filtered(db.selectFrom('smsMessages'), shape, params)
    .crossJoinLateral(itemProjection(params.previewLength))
    .select(sql<string>`row_to_json(item)::text`.as('json'))
  const withTotal = unfiltered(shape)
    ? query.select((eb) => {
        let counts = eb
          .selectFrom('smsMessageCounts')
          .select(sql<number>`coalesce(sum(messages), 0)::int8`.as('total'))
          .where('smsMessageCounts.tenantId', '=', params.tenantId)
        if (shape.bySender) counts = counts.where('smsMessageCounts.senderId', '=', params.senderId!)
        return counts.as('total')
      })
    : query.select(sql<number | null>`null::int8`.as('total'))
  // Qualified: a bare name in ORDER BY means the output column, here the formatted text, which no index can serve.
  const ordered =
    sort.field === 'sentAt'
      ? withTotal.orderBy('smsMessages.sentAt', (ob) => (sort.direction === 'asc' ? ob.asc() : ob.desc()).nullsLast())
      : withTotal.orderBy(`smsMessages.${sort.field}`, sort.direction)
  const page = ordered.orderBy('smsMessages.id', sort.direction).offset(params.offset).limit(params.limit)
  return servedByAnIndex(shape) ? page.$call(planOnce) : page.$call(planPerExecution)
}

// History is read far more often than anything is sent: each shape of the page query is compiled once.
const pageQueries = new Map<string, ReturnType<typeof compilePage>>()

function compilePage(shape: PageShape) {
  return precompiled((db, params: PageParams) => buildPage(db, shape, params))
}

function pageQuery(shape: PageShape) {
  const key = `${shape.sort.field},${shape.sort.direction},${+shape.bySender}${+shape.byStatus}${+shape.byRecipientType}${+shape.byPurpose}${+shape.byChannel}${+shape.bySearch}`
  let query = pageQueries.get(key)
  if (!query) {
    query = compilePage(shape)
    pageQueries.set(key, query)
  }
  return query
}

async function countMessages(trx: TenantTx, shape: PageShape, params: PageParams): Promise<number> {
  if (unfiltered(shape)) {
    let counts = trx
      .selectFrom('smsMessageCounts')
      .select(sql<number>`coalesce(sum(messages), 0)::int8`.as('total'))
      .where('tenantId', '=', params.tenantId)
    if (shape.bySender) counts = counts.where('senderId', '=', params.senderId!)
    return (await counts.executeTakeFirstOrThrow()).total
  }
  const row = await filtered(trx.selectFrom('smsMessages'), shape, params)
    .select((eb) => eb.fn.countAll<string>().as('total'))
    .$call(planPerExecution)
    .executeTakeFirstOrThrow()
  return Number(row.total)
}

/**
 * A page of history as the JSON text of its `items` array, and the number of messages the filter matches. Every
 * item already has the response's shape (see itemProjection), so the route sends the text as it is.
 */
export async function listHistoryPage(
  trx: TenantTx,
  filter: HistoryFilter,
  sort: HistorySort,
  page: { offset: number; limit: number },
  previewLength: number,
): Promise<{ itemsJson: string; total: number }> {
  const shape: PageShape = {
    sort,
    bySender: filter.senderId !== undefined,
    byStatus: filter.status !== undefined,
    byRecipientType: filter.recipientType !== undefined,
    byPurpose: filter.purpose !== undefined,
    byChannel: filter.channel !== undefined,
    bySearch: filter.q !== undefined && filter.q !== '',
  }
  const params: PageParams = {
    tenantId: filter.tenantId,
    senderId: filter.senderId,
    status: filter.status,
    recipientType: filter.recipientType,
    purpose: filter.purpose,
    channel: filter.channel,
    pattern: shape.bySearch ? likePattern(filter.q!) : '',
    previewLength,
    offset: page.offset,
    limit: page.limit,
  }
  const rows = await pageQuery(shape)(trx, params)
  const itemsJson = `[${rows.map((row) => row.json).join(',')}]`
  // The total rides on the rows of an unfiltered page; a filtered page, or one past the end, counts on its own.
  const total = rows[0]?.total ?? (await countMessages(trx, shape, params))
  return { itemsJson, total }
}
