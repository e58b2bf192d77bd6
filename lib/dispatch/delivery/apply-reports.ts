import { sql, type Kysely } from 'kysely'
import { findTenantBySlug } from '../../../db/repos/tenancy/tenants.js'
import type { DB, DeliveredVia } from '../../../db/schema.js'
import { EnvSchema } from '../../env.js'
import { type TenantTx, withTenant } from '../../../db/tenant-transaction.js'
import type { DeliveryReport, ParsedDeliveryReport } from './delivery-report.js'
import { aggregateStatus, deliveryStatusForCode, nextDeliveryStatus, type DeliveryStatus } from './delivery-status.js'

export interface ApplyResult {
  processed: number
  ignored: number
}

/** What a recipient delivered by an AlimTalk notice's fallback costs: SVC_SMS_PRICE_SMS and SVC_SMS_PRICE_LMS. */
export interface FallbackPrices {
  sms: number
  lms: number
}

/** The settings' defaults, for callers without the service's configuration (tools, tests). */
export const DEFAULT_FALLBACK_PRICES: FallbackPrices = {
  sms: EnvSchema.properties.SVC_SMS_PRICE_SMS.default as number,
  lms: EnvSchema.properties.SVC_SMS_PRICE_LMS.default as number,
}

/** How a delivered report says the recipient got it: the type the provider delivered (docs/provider.md#alimtalk-notices). */
function deliveredViaOf(type: string | null): DeliveredVia | null {
  if (type === 'ATA') return 'ALIMTALK'
  return type === 'SMS' || type === 'LMS' ? type : null
}

interface RecipientChange {
  recipientIndex: number
  status: DeliveryStatus
  deliveredVia: DeliveredVia | null
  messageId: string | null
  groupId: string | null
  statusCode: string
  statusMessage: string | null
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>()
  for (const item of items) {
    const list = groups.get(key(item))
    if (list) list.push(item)
    else groups.set(key(item), [item])
  }
  return groups
}

/**
 * Applies delivery reports (webhook and mock alike). Each report is matched by tenant slug, message id and
 * recipient index, then checked against the provider message id and group stored for that recipient (a recipient
 * never handed to the provider takes no report; docs/provider.md#matching-reports); anything unknown,
 * mismatching, duplicate or stale is counted as ignored and never touches another row. Reports of one message
 * are applied under that message's row lock, so success and failure counts stay exact under concurrent
 * callbacks, and the first final status of a recipient wins.
 */
export async function applyDeliveryReports(
  db: Kysely<DB>,
  parsed: ParsedDeliveryReport[],
  prices: FallbackPrices = DEFAULT_FALLBACK_PRICES,
): Promise<ApplyResult> {
  const result: ApplyResult = { processed: 0, ignored: 0 }
  const reports: DeliveryReport[] = []
  for (const entry of parsed) {
    if (entry.ok) reports.push(entry.report)
    else result.ignored++
  }
  for (const [slug, tenantReports] of groupBy(reports, (report) => report.tenantSlug)) {
    const tenant = await findTenantBySlug(db, slug)
    if (!tenant) {
      result.ignored += tenantReports.length
      continue
    }
    const byMessage = [...groupBy(tenantReports, (report) => report.smsId)].sort(([a], [b]) => a - b)
    await withTenant(db, tenant.id, async (trx) => {
      // Ascending message order: two concurrent batches lock rows in the same order and cannot deadlock.
      for (const [smsId, messageReports] of byMessage) {
        const applied = await applyToMessage(trx, smsId, messageReports, prices)
        result.processed += applied
        result.ignored += messageReports.length - applied
      }
    })
  }
  return result
}

async function applyToMessage(trx: TenantTx, smsId: number, reports: DeliveryReport[], prices: FallbackPrices): Promise<number> {
  const message = await trx
    .selectFrom('smsMessages')
    .select([
      'id',
      'status',
      'providerGroupId',
      'openGroupId',
      'recipientCount',
      'optedOutCount',
      'noConsentCount',
      'successCount',
      'failCount',
      'channel',
      'unitPrice',
      'totalPrice',
      'alimtalkCount',
      'fallbackCount',
    ])
    .where('id', '=', smsId)
    .forUpdate()
    .executeTakeFirst()
  if (!message) return 0
  const indexes = [...new Set(reports.map((report) => report.recipientIndex))]
  const recipients = await trx
    .selectFrom('smsRecipients')
    .select(['recipientIndex', 'deliveryStatus', 'providerMessageId', 'providerGroupId'])
    .where('smsId', '=', smsId)
    .where('recipientIndex', 'in', indexes)
    .execute()
  const current = new Map(recipients.map((recipient) => [recipient.recipientIndex, { ...recipient }]))

  // Recipients of an attempt whose outcome is not recorded yet (in flight, or left unresolved) may be in its open
  // group, recorded before any message was added to it; a report of that group may come first, and then carries the
  // ids the dispatcher is about to store.
  const openGroupId = message.status === 'PENDING' ? message.openGroupId : null
  let groupId = message.providerGroupId
  const changes = new Map<number, RecipientChange>()
  let delivered = 0
  let failed = 0
  let applied = 0
  // An AlimTalk message's recipients: by Kakao, or by the fallback, which is re-priced at its SMS or LMS price. One
  // whose AlimTalk and fallback both failed keeps its estimate (a failure costs nothing more, and nothing back).
  let overAlimtalk = 0
  let byFallback = 0
  let repriced = 0
  for (const report of reports) {
    const recipient = current.get(report.recipientIndex)
    if (!recipient) continue
    // Matched on the ids stored for this recipient. Never handed over (no provider message id, not of the open
    // group): ignored. Another message id, or another group than the one that sent it: ignored.
    if (recipient.providerMessageId) {
      if (report.messageId !== recipient.providerMessageId) continue
    } else if (!(openGroupId !== null && report.groupId === openGroupId && recipient.deliveryStatus === 'PENDING' && report.messageId)) {
      continue
    }
    if (recipient.providerGroupId && report.groupId && report.groupId !== recipient.providerGroupId) continue
    const next = nextDeliveryStatus(recipient.deliveryStatus, deliveryStatusForCode(report.statusCode))
    if (!next) continue
    groupId ??= report.groupId
    const deliveredVia = next === 'DELIVERED' ? deliveredViaOf(report.type) : null
    if (next === 'DELIVERED') delivered++
    if (next === 'FAILED') failed++
    if (message.channel === 'ALIMTALK' && deliveredVia === 'ALIMTALK') overAlimtalk++
    if (message.channel === 'ALIMTALK' && (deliveredVia === 'SMS' || deliveredVia === 'LMS')) {
      byFallback++
      repriced += (deliveredVia === 'SMS' ? prices.sms : prices.lms) - message.unitPrice
    }
    applied++
    recipient.deliveryStatus = next
    recipient.providerMessageId ??= report.messageId
    recipient.providerGroupId ??= report.groupId
    changes.set(report.recipientIndex, {
      recipientIndex: report.recipientIndex,
      status: next,
      deliveredVia,
      messageId: recipient.providerMessageId,
      groupId: recipient.providerGroupId,
      statusCode: report.statusCode,
      statusMessage: report.statusMessage,
    })
  }
  if (changes.size === 0) return 0

  const rows = [...changes.values()]
  await sql`
    update sms_recipients r set
      delivery_status = c.status, provider_message_id = c.message_id, provider_group_id = c.group_id,
      provider_status_code = c.status_code, provider_status_message = left(c.status_message, 200),
      delivered_via = coalesce(c.delivered_via, r.delivered_via), reported_at = now(), updated_at = now()
    from unnest(${rows.map((row) => row.recipientIndex)}::int[], ${rows.map((row) => row.status)}::text[],
                ${rows.map((row) => row.deliveredVia)}::text[],
                ${rows.map((row) => row.messageId)}::text[], ${rows.map((row) => row.groupId)}::text[],
                ${rows.map((row) => row.statusCode)}::text[], ${rows.map((row) => row.statusMessage)}::text[])
      as c(recipient_index, status, delivered_via, message_id, group_id, status_code, status_message)
    where r.sms_id = ${smsId} and r.recipient_index = c.recipient_index`.execute(trx)

  const successCount = message.successCount + delivered
  const failCount = message.failCount + failed
  // A message still PENDING is mid-dispatch: the dispatcher settles its status when it records the attempt.
  const settled =
    message.status === 'DISPATCHED'
      ? aggregateStatus({
          DELIVERED: successCount,
          FAILED: failCount,
          // Recipients left out (opted out, no consent) were never sent: no report will ever settle them.
          DISPATCHED: message.recipientCount - message.optedOutCount - message.noConsentCount - successCount - failCount,
        })
      : null
  await trx
    .updateTable('smsMessages')
    .set({
      successCount,
      failCount,
      ...(overAlimtalk + byFallback > 0
        ? {
            alimtalkCount: message.alimtalkCount + overAlimtalk,
            fallbackCount: message.fallbackCount + byFallback,
            totalPrice: message.totalPrice + repriced,
          }
        : {}),
      providerGroupId: groupId,
      providerStatus: rows.at(-1)?.statusCode ?? null,
      updatedAt: new Date(),
      ...(settled ? { status: settled, confirmedAt: new Date() } : {}),
    })
    .where('id', '=', smsId)
    .execute()
  return applied
}
