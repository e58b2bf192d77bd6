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
  const accepted = readEntries(messageList, sent, seen, (entry, recipientIndex) => {
    const messageId = nonEmptyString(entry.messageId)
    if (messageId === null) return null
    return { recipientIndex, messageId, statusCode: nonEmptyString(entry.statusCode) ?? '2000' }
  })
  const refused = readEntries(failedList, sent, seen, (entry, recipientIndex) => {
    const statusCode = nonEmptyString(entry.statusCode)
    if (statusCode === null) return null
    return { recipientIndex, statusCode, statusMessage: nonEmptyString(entry.statusMessage) ?? '' }
  })
  return { kind: 'accepted', groupId: nonEmptyString(body.groupInfo.groupId), accepted, refused }
}

/**
 * The entries of one list that `read` can record, each for a recipient of this call not already in `seen` (which
 * it then joins). `read` answers null for an entry lacking what it needs.
 */
function readEntries<Entry>(
  list: readonly unknown[],
  sent: ReadonlySet<number>,
  seen: Set<number>,
  read: (entry: Fields, recipientIndex: number) => Entry | null,
): Entry[] {
  const entries: Entry[] = []
  for (const entry of list) {
    if (!isObject(entry)) continue
    const recipientIndex = recipientOf(entry, sent)
    if (recipientIndex === null || seen.has(recipientIndex)) continue
    const recorded = read(entry, recipientIndex)
    if (recorded === null) continue
    seen.add(recipientIndex)
    entries.push(recorded)
  }
  return entries
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
