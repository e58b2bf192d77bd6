import type { AuditPosition } from '../../db/repos/audit/audit-events.js'

// A cursor of GET /v1/audit-events names the last event of a page (its instant to the microsecond and its id: the
// log's order) and the number of the page it leads to. Opaque to clients, so its form may change; it carries no
// filter, so it means "the events after this one" under whatever filters the next request has.

/** The page a cursor leads to, and the event that page starts after. */
export interface AuditCursor extends AuditPosition {
  page: number
}

const FORM = /^(\d{1,16})\.(-?\d{1,16})\.(\d{1,16})$/

export function encodeAuditCursor(cursor: AuditCursor): string {
  return Buffer.from(`${cursor.page}.${cursor.occurredMicros}.${cursor.id}`).toString('base64url')
}

/**
 * The cursor `text` names, or undefined when it names none (any text a client sends: never trusted). Safe integers
 * only, so the values reach SQL exactly and within range; re-encoding must give the text back, since base64url
 * decoding skips what it cannot read.
 */
export function decodeAuditCursor(text: string): AuditCursor | undefined {
  const match = FORM.exec(Buffer.from(text, 'base64url').toString('latin1'))
  if (!match) return undefined
  const [page, occurredMicros, id] = [Number(match[1]), Number(match[2]), Number(match[3])]
  if (![page, occurredMicros, id].every(Number.isSafeInteger) || id < 1) return undefined
  const cursor = { page, occurredMicros, id }
  return encodeAuditCursor(cursor) === text ? cursor : undefined
}
