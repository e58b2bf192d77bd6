import type { SendResult } from './provider.js'

/** Turns the provider's HTTP answer into a SendResult (docs/provider.md#answers). */

const MAX_ERROR_LENGTH = 500

type Fields = Record<string, unknown>
type Accepted = Extract<SendResult, { kind: 'accepted' }>

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

/** `ValidationError: text is required (HTTP 400)`, or just the status when the body is not the error shape. */
export function describeHttpError(status: number, text: string): string {
  const body = parseJson(text)
  const code = isObject(body) ? nonEmptyString(body.errorCode) : null
  if (code === null) return `HTTP ${status}`
  const message = isObject(body) ? nonEmptyString(body.errorMessage) : null
  return `${code}: ${message ?? ''} (HTTP ${status})`.slice(0, MAX_ERROR_LENGTH)
}

function recipientOf(entry: Fields, sent: ReadonlySet<number>): number | null {
  const raw = isObject(entry.customFields) ? entry.customFields.svcRecipient : undefined
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw)) return null
  const index = Number(raw)
  return sent.has(index) ? index : null
}

function listOf(value: unknown): unknown[] | null {
  if (value === undefined || value === null) return []
  return Array.isArray(value) ? value : null
}

/**
 * The 200 body. Entries that name no recipient of this call, or lack the id or code needed to record them, are
 * ignored; that recipient is then neither accepted nor refused. A recipient listed twice keeps its first entry,
 * and accepted entries are read first, because treating an accepted recipient as refused could resend it.
 */
export function parseAcceptedBody(text: string, sent: ReadonlySet<number>): Accepted | null {
  const body = parseJson(text)
  if (!isObject(body) || !isObject(body.groupInfo)) return null
  const messageList = listOf(body.messageList)
  const failedList = listOf(body.failedMessageList)
  if (messageList === null || failedList === null) return null

  const seen = new Set<number>()
  const groupId = nonEmptyString(body.groupInfo.groupId)
  const result: Accepted = { kind: 'accepted', groupId, accepted: [], refused: [] }
  for (const entry of messageList) {
    if (!isObject(entry)) continue
    const recipientIndex = recipientOf(entry, sent)
    const messageId = nonEmptyString(entry.messageId)
    if (recipientIndex === null || messageId === null || seen.has(recipientIndex)) continue
    seen.add(recipientIndex)
    result.accepted.push({ recipientIndex, messageId, statusCode: nonEmptyString(entry.statusCode) ?? '2000' })
  }
  for (const entry of failedList) {
    if (!isObject(entry)) continue
    const recipientIndex = recipientOf(entry, sent)
    const statusCode = nonEmptyString(entry.statusCode)
    if (recipientIndex === null || statusCode === null || seen.has(recipientIndex)) continue
    seen.add(recipientIndex)
    result.refused.push({ recipientIndex, statusCode, statusMessage: nonEmptyString(entry.statusMessage) ?? '' })
  }
  return result
}

export function classifyResponse(status: number, text: string, sent: ReadonlySet<number>): SendResult {
  if (status >= 200 && status < 300) {
    // An unreadable 2xx gives no message ids, so no recipient can be marked as sent; retrying risks a duplicate
    // but never silently drops the message.
    const accepted = parseAcceptedBody(text, sent)
    return accepted ?? { kind: 'retryable', error: `unreadable ${status} response from the provider` }
  }
  const error = describeHttpError(status, text)
  return status === 429 || status >= 500 ? { kind: 'retryable', error } : { kind: 'rejected', error }
}
