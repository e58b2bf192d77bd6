import { deliveryStatusForCode } from '../delivery/delivery-status.js'
import type { CallFailure, CallRecipient, GroupEntry } from './provider.js'

/** Reads the provider's HTTP answers to the group API's calls (docs/provider.md#answers). */

const MAX_ERROR_LENGTH = 500

type Fields = Record<string, unknown>

export function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export function nonEmptyString(value: unknown): string | null {
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

/** A non-2xx answer: 429 and 5xx may be tried again (the call may have taken effect); any other is a refusal. */
export function failureOf(status: number, text: string): CallFailure {
  const error = describeHttpError(status, text)
  return status === 429 || status >= 500 ? { kind: 'retryable', error } : { kind: 'rejected', error }
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
  asked: ReadonlySet<number>
  /** Recipient indexes by the digits of their number, in request order (siblings can share a guardian's phone). */
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
  const asked = new Set(recipients.map((recipient) => recipient.recipientIndex))
  return { asked, byPhone, nextFree: new Map(), taken: new Set(), messageIds: new Set() }
}

/** The echo, when the entry has one, is the authority, even over a `to` that names another recipient. */
function byEcho(entry: Fields, matching: Matching): number | null {
  const index = echoedIndex(entry)
  return index !== null && matching.asked.has(index) ? index : null
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

type Pick = (entry: Fields, matching: Matching) => number | null

/** An entry's status code if it has one; an entry without one says nothing about its message. */
function statusCodeOf(entry: Fields): string | null {
  return nonEmptyString(entry.statusCode)
}

function tookMessage(entry: Fields): boolean {
  const code = statusCodeOf(entry)
  return code !== null && deliveryStatusForCode(code) !== 'FAILED'
}

/**
 * Matches answer entries (an add call's `resultList`, a group's `messageList`) to the recipients asked about.
 * Entries that name no such recipient or carry no status code are ignored; that recipient then has no entry. A
 * recipient listed twice keeps its first entry, and entries whose code says the provider took the message are read
 * first: treating a taken recipient as refused could send it again. Entries with an echo are all read before those
 * without, so matching by number never takes a recipient an echo names.
 */
export function matchEntries(list: readonly unknown[], recipients: readonly CallRecipient[]): GroupEntry[] {
  const objects = list.filter(isObject)
  const ordered = [...objects.filter(tookMessage), ...objects.filter((entry) => !tookMessage(entry))]
  const matching = startMatching(recipients)
  return [...readWith(ordered, matching, byEcho), ...readWith(ordered, matching, byPhone)]
}

function readWith(list: readonly Fields[], matching: Matching, pick: Pick): GroupEntry[] {
  const entries: GroupEntry[] = []
  for (const entry of list) {
    const statusCode = statusCodeOf(entry)
    if (statusCode === null) continue
    const recipientIndex = pick(entry, matching)
    if (recipientIndex === null || matching.taken.has(recipientIndex)) continue
    matching.taken.add(recipientIndex)
    const messageId = nonEmptyString(entry.messageId)
    if (messageId !== null) matching.messageIds.add(messageId)
    entries.push({ recipientIndex, messageId, statusCode, statusMessage: nonEmptyString(entry.statusMessage) ?? '' })
  }
  return entries
}

/** A group object (create, send and read answer one): its id and whether it has been sent. */
export function parseGroup(text: string): { groupId: string; sent: boolean } | null {
  const body = parseJson(text)
  const group = isObject(body) && isObject(body.groupInfo) ? body.groupInfo : body
  if (!isObject(group)) return null
  const groupId = nonEmptyString(group.groupId)
  const status = nonEmptyString(group.status)
  if (groupId === null || status === null) return null
  return { groupId, sent: status !== 'PENDING' }
}

/** The add call's answer: `{errorCount, resultList: [...]}`. */
export function parseAddAnswer(text: string): unknown[] | null {
  const body = parseJson(text)
  return isObject(body) && Array.isArray(body.resultList) ? body.resultList : null
}

/** One page of a group's messages: `{nextKey, messageList: {<messageId>: {...}}}`. */
export function parseMessagePage(text: string): { entries: unknown[]; nextKey: string | null } | null {
  const body = parseJson(text)
  if (!isObject(body)) return null
  const list = body.messageList
  if (list !== undefined && list !== null && !isObject(list) && !Array.isArray(list)) return null
  const entries = list === undefined || list === null ? [] : Array.isArray(list) ? list : Object.values(list)
  return { entries, nextKey: nonEmptyString(body.nextKey) }
}
