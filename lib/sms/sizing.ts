import { AppError } from '../errors.js'

/** Sizes and prices the way the provider bills (docs/api.md#message-type-and-price). */

export const SMS_MAX_BYTES = 90
export const LMS_MAX_BYTES = 2000
/** The provider refuses an LMS subject over 40 bytes (docs/provider.md#message-types-and-sizes). */
export const LMS_SUBJECT_MAX_BYTES = 40

export type MessageType = 'SMS' | 'LMS'

export interface RenderFields {
  name?: string | null
  className?: string | null
}

export interface MessageEstimate {
  messageType: MessageType
  estimatedSegments: number
  unitPrice: number
  totalPrice: number
  maxBytes: number
}

const PLACEHOLDER = /\{(name|className)\}/g
const NAME_TOKEN = '{name}'
const CLASS_NAME_TOKEN = '{className}'

/**
 * Carrier byte count: ASCII 1, every other code point 2. A surrogate pair is one code point (2 bytes); a lone
 * surrogate also counts 2, so malformed text never comes out shorter than it will be billed.
 */
export function smsByteLength(text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit <= 0x7f) {
      bytes += 1
      continue
    }
    bytes += 2
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++
  }
  return bytes
}

let eucKrCharacters: Uint8Array | null = null

/**
 * The double-byte characters of EUC-KR (KS X 1001: lead and trail bytes 0xA1-0xFE), read once from the WHATWG
 * decoder, as one flag per UTF-16 code unit (64 KiB): a lookup per character of every text sized. Strict KS X 1001,
 * not the CP949 extension: a character the provider might refuse for SMS (1029) is sent as LMS, which costs more
 * but is delivered. All of them are in the Basic Multilingual Plane.
 */
function eucKrTable(): Uint8Array {
  if (eucKrCharacters) return eucKrCharacters
  const bytes: number[] = []
  for (let lead = 0xa1; lead <= 0xfe; lead++) for (let trail = 0xa1; trail <= 0xfe; trail++) bytes.push(lead, trail)
  const table = new Uint8Array(0x10000)
  const decoded = new TextDecoder('euc-kr').decode(Uint8Array.from(bytes))
  for (let i = 0; i < decoded.length; i++) table[decoded.charCodeAt(i)] = 1
  table[0xfffd] = 0
  eucKrCharacters = table
  return table
}

/**
 * Whether every character can go out as SMS: ASCII or EUC-KR. Emoji, lone surrogates and the like cannot: EUC-KR
 * has nothing outside the Basic Multilingual Plane, so any surrogate code unit answers no.
 */
export function isEucKrText(text: string): boolean {
  let table: Uint8Array | null = null
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit <= 0x7f) continue
    if (unit >= 0xd800 && unit <= 0xdfff) return false
    table ??= eucKrTable()
    if (table[unit] === 0) return false
  }
  return true
}

/** Replaces `{name}` and `{className}` only; a value is inserted as written and never scanned again. */
export function renderContent(content: string, recipient: RenderFields): string {
  return content.replace(PLACEHOLDER, (_match, field: 'name' | 'className') => recipient[field] ?? '')
}

function countOccurrences(text: string, token: string): number {
  let count = 0
  for (let at = text.indexOf(token); at !== -1; at = text.indexOf(token, at + token.length)) count++
  return count
}

/**
 * The byte length of every recipient's rendering is the template's fixed part plus each placeholder's value,
 * so 10,000 recipients cost one pass over their names, not 10,000 renderings. `frame` is text every rendering
 * carries besides the content and is never rendered (an advertisement's label and opt-out line,
 * lib/advertising/advertising.ts): it counts in the size, the type and the limit like the content.
 */
export function estimateMessage(
  content: string,
  recipients: readonly RenderFields[],
  prices: { sms: number; lms: number },
  frame = '',
): MessageEstimate {
  const nameCount = countOccurrences(content, NAME_TOKEN)
  const classNameCount = countOccurrences(content, CLASS_NAME_TOKEN)
  const fixedBytes =
    smsByteLength(content) +
    smsByteLength(frame) -
    nameCount * smsByteLength(NAME_TOKEN) -
    classNameCount * smsByteLength(CLASS_NAME_TOKEN)

  // Every rendering is at least the fixed part, which is also the answer when there are no recipients.
  let maxBytes = fixedBytes
  let longestIndex: number | null = null
  // A rendering with a character outside EUC-KR (emoji) is never SMS. The placeholders are ASCII,
  // so checking the content once and each inserted value once covers every rendering.
  let eucKr = isEucKrText(content) && isEucKrText(frame)
  for (const [index, recipient] of recipients.entries()) {
    if (eucKr) {
      eucKr =
        (nameCount === 0 || isEucKrText(recipient.name ?? '')) && (classNameCount === 0 || isEucKrText(recipient.className ?? ''))
    }
    const bytes =
      fixedBytes +
      (nameCount > 0 ? nameCount * smsByteLength(recipient.name ?? '') : 0) +
      (classNameCount > 0 ? classNameCount * smsByteLength(recipient.className ?? '') : 0)
    if (longestIndex === null || bytes > maxBytes) {
      maxBytes = bytes
      longestIndex = index
    }
  }

  if (maxBytes > LMS_MAX_BYTES) {
    const whose = longestIndex === null ? '' : ` for recipient ${longestIndex}`
    throw new AppError(
      'CONTENT_TOO_LONG',
      `The rendered content is ${maxBytes} bytes${whose}; the limit is ${LMS_MAX_BYTES} bytes.`,
    )
  }
  const messageType: MessageType = maxBytes <= SMS_MAX_BYTES && eucKr ? 'SMS' : 'LMS'
  const unitPrice = messageType === 'SMS' ? prices.sms : prices.lms
  const recipientCount = recipients.length
  return { messageType, estimatedSegments: recipientCount, unitPrice, totalPrice: unitPrice * recipientCount, maxBytes }
}

/** The recipients' common role, or CUSTOM when they are mixed, blank or absent. */
export function inferRecipientType(recipients: readonly { recipientRole?: string | null }[]): string {
  const first = recipients[0]?.recipientRole
  if (!first || first.trim() === '') return 'CUSTOM'
  return recipients.every((recipient) => recipient.recipientRole === first) ? first : 'CUSTOM'
}

/** The longest prefix of `text` within `maxBytes`, cut between code points so no character is split. */
export function truncateToBytes(text: string, maxBytes: number): string {
  let bytes = 0
  let end = 0
  for (const char of text) {
    bytes += smsByteLength(char)
    if (bytes > maxBytes) break
    end += char.length
  }
  return text.slice(0, end)
}
