import { AppError } from '../../errors.js'

/**
 * Parses the provider's delivery-report webhook body (docs/provider.md#report-format). The provider retries a
 * whole batch until it gets 200, so one bad element must not fail the others: each element parses on its own
 * and a bad one becomes `{ok: false, reason}` for the caller to count as ignored.
 */

export interface DeliveryReport {
  tenantSlug: string
  smsId: number
  recipientIndex: number
  messageId: string | null
  groupId: string | null
  statusCode: string
  statusMessage: string | null
  dateProcessed: Date | null
  /**
   * The type the provider delivered (or failed) it as: `SMS`, `LMS`, or `ATA`; for an AlimTalk notice that Kakao
   * could not deliver, the fallback's type (docs/provider.md#alimtalk-notices). Null when the report does not say.
   */
  type: string | null
}

export type ParsedDeliveryReport = { ok: true; report: DeliveryReport } | { ok: false; reason: string }

// Message ids reach 16 digits (a month's range starts at yyyymm x 10^10); past 2^53-1 a number names no row.
const DIGITS = /^\d{1,16}$/
/** Provider ids are 32 characters; the columns hold 64. Status codes are 4 (columns: 10). */
const MAX_PROVIDER_ID = 64
const MAX_STATUS_CODE = 10

type Fields = Record<string, unknown>

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

// customFields are strings on the wire; a JSON integer is tolerated because it names the same row.
function toIndex(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : null
  if (typeof value === 'string' && DIGITS.test(value) && Number.isSafeInteger(Number(value))) return Number(value)
  return null
}

function optionalText(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

function toDate(value: unknown): Date | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date
}

function statusCodeOf(value: unknown): string | null {
  if (typeof value === 'string' && value.trim() !== '') return value.trim()
  if (typeof value === 'number' && Number.isInteger(value)) return String(value)
  return null
}

export function parseDeliveryReport(item: unknown): ParsedDeliveryReport {
  if (!isObject(item)) return { ok: false, reason: 'entry is not an object' }
  const data = item.data ?? item
  if (!isObject(data)) return { ok: false, reason: 'data is not an object' }
  const custom = data.customFields
  if (!isObject(custom)) return { ok: false, reason: 'customFields missing' }

  const tenantSlug = optionalText(custom.svcTenant)
  if (tenantSlug === null) return { ok: false, reason: 'customFields.svcTenant missing' }
  const smsId = toIndex(custom.svcSmsId)
  if (smsId === null || smsId === 0) return { ok: false, reason: 'customFields.svcSmsId is not a positive integer' }
  const recipientIndex = toIndex(custom.svcRecipient)
  if (recipientIndex === null) return { ok: false, reason: 'customFields.svcRecipient is not a non-negative integer' }
  const statusCode = statusCodeOf(data.statusCode)
  if (statusCode === null) return { ok: false, reason: 'statusCode missing' }
  // Longer than anything the provider sends or the columns hold: this entry alone is bad.
  if (statusCode.length > MAX_STATUS_CODE) return { ok: false, reason: 'statusCode too long' }
  // Anything but a short word says nothing usable about how it went.
  const type = optionalText(data.type)
  const messageId = optionalText(data.messageId)
  const groupId = optionalText(data.groupId)
  if ((messageId?.length ?? 0) > MAX_PROVIDER_ID || (groupId?.length ?? 0) > MAX_PROVIDER_ID) {
    return { ok: false, reason: 'provider id too long' }
  }

  return {
    ok: true,
    report: {
      tenantSlug,
      smsId,
      recipientIndex,
      messageId,
      groupId,
      statusCode,
      statusMessage: optionalText(data.statusMessage),
      dateProcessed: toDate(data.dateProcessed),
      type: type !== null && type.length <= 20 ? type : null,
    },
  }
}

/** Throws VALIDATION_FAILED only when the body is not an array; never for a bad element. */
export function parseDeliveryReports(body: unknown): ParsedDeliveryReport[] {
  if (!Array.isArray(body)) throw new AppError('VALIDATION_FAILED', 'body must be a JSON array')
  return body.map(parseDeliveryReport)
}
