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

/** A recipient of this call and the number it was sent to: what an answer entry can be matched back by. */
export interface CallRecipient {
  recipientIndex: number
  to: string
}

function listOf(value: unknown): unknown[] | null {
  if (value === undefined || value === null) return []
  return Array.isArray(value) ? value : null
}

function digitsOf(value: unknown): string {
  return typeof value === 'string' ? value.replace(/\D/g, '') : ''
}

/** The recipient index an entry echoes back in `customFields.svcRecipient`, or null when it has no usable echo. */
function echoedIndex(entry: Fields): number | null {
  const raw = isObject(entry.customFields) ? entry.customFields.svcRecipient : undefined
  return typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : null
}

/** What one answer has matched so far: recipients taken by an entry, and the message ids those entries had. */
interface Matching {
  inCall: ReadonlySet<number>
  /** Recipient indexes by the digits of their number, in call order (siblings can share a guardian's phone). */
  byPhone: ReadonlyMap<string, readonly number[]>
  /** Per number, how far into `byPhone` every recipient is taken; `taken` only grows, so this only moves on. */
  nextFree: Map<string, number>
  taken: Set<number>
  messageIds: Set<string>
}

function startMatching(recipients: readonly CallRecipient[]): Matching {
  const byPhone = new Map<string, number[]>()
  for (const { recipientIndex, to } of recipients) {
    const phone = digitsOf(to)
    if (phone === '') continue
    const same = byPhone.get(phone)
    if (same) same.push(recipientIndex)
    else byPhone.set(phone, [recipientIndex])
  }
  const inCall = new Set(recipients.map((recipient) => recipient.recipientIndex))
  return { inCall, byPhone, nextFree: new Map(), taken: new Set(), messageIds: new Set() }
}

/** The echo, when the entry has one, is the authority, even over a `to` that names another recipient. */
function byEcho(entry: Fields, matching: Matching): number | null {
  const index = echoedIndex(entry)
  return index !== null && matching.inCall.has(index) ? index : null
}

/**
 * The SDK declares the echo optional, so an entry without one is matched by its number: the first recipient with
 * that number no entry has taken yet, so that two entries for siblings sharing a phone reach two recipients. A
 * message id already matched is the same message listed again, and its recipient already has its entry.
 */
function byPhone(entry: Fields, matching: Matching): number | null {
  if (echoedIndex(entry) !== null) return null
  const messageId = nonEmptyString(entry.messageId)
  if (messageId !== null && matching.messageIds.has(messageId)) return null
  const phone = digitsOf(entry.to)
  const candidates = matching.byPhone.get(phone) ?? []
  let at = matching.nextFree.get(phone) ?? 0
  while (at < candidates.length && matching.taken.has(candidates[at]!)) at += 1
  matching.nextFree.set(phone, at)
  return candidates[at] ?? null
}

type MatchEntry = (entry: Fields, matching: Matching) => number | null

/**
 * The 200 body. Entries that name no recipient of this call, or lack the id or code needed to record them, are
 * ignored; that recipient is then neither accepted nor refused. A recipient listed twice keeps its first entry,
 * and accepted entries are read first, because treating an accepted recipient as refused could resend it. Entries
 * with an echo are all read before those without, so matching by number never takes a recipient an echo names.
 */
export function parseAcceptedBody(text: string, recipients: readonly CallRecipient[]): Accepted | null {
  const body = parseJson(text)
  if (!isObject(body) || !isObject(body.groupInfo)) return null
  const messageList = listOf(body.messageList)
  const failedList = listOf(body.failedMessageList)
  if (messageList === null || failedList === null) return null

  const matching = startMatching(recipients)
  const readAll = (pick: MatchEntry) => ({
    accepted: readEntries(messageList, matching, pick, (entry, recipientIndex) => {
      const messageId = nonEmptyString(entry.messageId)
      if (messageId === null) return null
      return { recipientIndex, messageId, statusCode: nonEmptyString(entry.statusCode) ?? '2000' }
    }),
    refused: readEntries(failedList, matching, pick, (entry, recipientIndex) => {
      const statusCode = nonEmptyString(entry.statusCode)
      if (statusCode === null) return null
      return { recipientIndex, statusCode, statusMessage: nonEmptyString(entry.statusMessage) ?? '' }
    }),
  })
  const echoed = readAll(byEcho)
  const unechoed = readAll(byPhone)
  return {
    kind: 'accepted',
    groupId: nonEmptyString(body.groupInfo.groupId),
    accepted: [...echoed.accepted, ...unechoed.accepted],
    refused: [...echoed.refused, ...unechoed.refused],
  }
}

/**
 * The entries of one list that `read` can record, each for the recipient `pick` names if no entry has taken it
 * yet (it then is, with the entry's message id). `read` answers null for an entry lacking what it needs.
 */
function readEntries<Entry>(
  list: readonly unknown[],
  matching: Matching,
  pick: MatchEntry,
  read: (entry: Fields, recipientIndex: number) => Entry | null,
): Entry[] {
  const entries: Entry[] = []
  for (const entry of list) {
    if (!isObject(entry)) continue
    const recipientIndex = pick(entry, matching)
    if (recipientIndex === null || matching.taken.has(recipientIndex)) continue
    const recorded = read(entry, recipientIndex)
    if (recorded === null) continue
    matching.taken.add(recipientIndex)
    const messageId = nonEmptyString(entry.messageId)
    if (messageId !== null) matching.messageIds.add(messageId)
    entries.push(recorded)
  }
  return entries
}

export function classifyResponse(status: number, text: string, recipients: readonly CallRecipient[]): SendResult {
  if (status >= 200 && status < 300) {
    // An unreadable 2xx gives no message ids, so no recipient can be marked as sent; retrying risks a duplicate
    // but never silently drops the message.
    const accepted = parseAcceptedBody(text, recipients)
    return accepted ?? { kind: 'retryable', error: `unreadable ${status} response from the provider` }
  }
  const error = describeHttpError(status, text)
  return status === 429 || status >= 500 ? { kind: 'retryable', error } : { kind: 'rejected', error }
}
