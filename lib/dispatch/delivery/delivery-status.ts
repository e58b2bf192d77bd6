/** Recipient delivery states and the message status they add up to (docs/api.md#delivery-status). */

export type DeliveryStatus = 'PENDING' | 'DISPATCHED' | 'DELIVERED' | 'FAILED' | 'CANCELLED' | 'OPTED_OUT' | 'NO_CONSENT'
export type FinalDeliveryStatus = 'DELIVERED' | 'FAILED' | 'CANCELLED' | 'OPTED_OUT' | 'NO_CONSENT'
export type AggregateStatus = 'SENT' | 'PARTIAL' | 'FAILED' | 'CANCELLED'

const PENDING_AT_PROVIDER = new Set(['2000', '3000'])
const DELIVERED_CODE = '4000'

/** `2000`/`3000` are still on their way; `4000` is delivered; every other code is a final failure. */
export function deliveryStatusForCode(statusCode: string): 'DISPATCHED' | 'DELIVERED' | 'FAILED' {
  if (statusCode === DELIVERED_CODE) return 'DELIVERED'
  return PENDING_AT_PROVIDER.has(statusCode) ? 'DISPATCHED' : 'FAILED'
}

export function isFinalDeliveryStatus(status: DeliveryStatus): status is FinalDeliveryStatus {
  return (
    status === 'DELIVERED' || status === 'FAILED' || status === 'CANCELLED' || status === 'OPTED_OUT' || status === 'NO_CONSENT'
  )
}

/**
 * The status a recipient moves to when `incoming` is reported while it is `current`, or null when the report
 * changes nothing. The first final status wins and nothing goes back to PENDING or DISPATCHED, so repeated and
 * out-of-order provider reports are harmless.
 */
export function nextDeliveryStatus(current: DeliveryStatus, incoming: DeliveryStatus): DeliveryStatus | null {
  if (isFinalDeliveryStatus(current) || incoming === current || incoming === 'PENDING') return null
  return incoming
}

export type DeliveryCounts = Partial<Record<DeliveryStatus, number>>

/**
 * The message status once no recipient is PENDING or DISPATCHED, else null (not decided yet). All DELIVERED ->
 * SENT, none DELIVERED -> FAILED, otherwise PARTIAL. A CANCELLED recipient did not get the message, so it counts
 * against SENT like a failure; only a message whose every recipient is CANCELLED aggregates to CANCELLED.
 * OPTED_OUT (an advertisement's recipient on the opt-out list) is final and neither a success nor a failure: it
 * is left out of the count, so two delivered and one opted out is SENT; NO_CONSENT (no live consent) likewise. No recipients at all (or only opted-out
 * ones) is null: there is nothing to decide.
 */
export function aggregateStatus(counts: DeliveryCounts): AggregateStatus | null {
  const pending = (counts.PENDING ?? 0) + (counts.DISPATCHED ?? 0)
  const delivered = counts.DELIVERED ?? 0
  const failed = counts.FAILED ?? 0
  const cancelled = counts.CANCELLED ?? 0
  const total = pending + delivered + failed + cancelled
  if (pending > 0 || total === 0) return null
  if (delivered === total) return 'SENT'
  if (cancelled === total) return 'CANCELLED'
  return delivered === 0 ? 'FAILED' : 'PARTIAL'
}
