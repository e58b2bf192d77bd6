import { LMS_SUBJECT_MAX_BYTES, truncateToBytes } from '../sms/sizing.js'

/**
 * The text of an advertisement, as Korean law (Information and Communications Network Act, article 50) wants it:
 * `(광고)` and the sender's name first, the free opt-out number last. The frame is fixed when the message is accepted
 * (db/migrations/2026-11-28T00-00-00-advertising.ts), so the size and price in the 201 answer are those of the text
 * the provider gets.
 */

export const ADVERTISEMENT_LABEL = '(광고)'
const OPT_OUT_LINE = '무료거부 '

export interface AdvertisementFrame {
  /** The tenant's name when the message was accepted. */
  senderName: string
  /** The tenant's opt-out number, digits only. */
  optOutNumber: string
}

function header(frame: AdvertisementFrame): string {
  return `${ADVERTISEMENT_LABEL}${frame.senderName}\n`
}

function footer(frame: AdvertisementFrame): string {
  return `\n${OPT_OUT_LINE}${frame.optOutNumber}`
}

/**
 * One recipient's text: `rendered` is the content with its placeholders already filled, so a `{name}` in the
 * tenant's name is never taken for a placeholder.
 */
export function frameAdvertisement(rendered: string, frame: AdvertisementFrame): string {
  return `${header(frame)}${rendered}${footer(frame)}`
}

/** What the frame adds to every rendering: sized with the content (lib/sms/sizing.ts), never rendered. */
export function frameText(frame: AdvertisementFrame): string {
  return header(frame) + footer(frame)
}

/**
 * An LMS advertisement's subject: phones show it before the text, so it starts with the label too, then the title,
 * cut to the provider's 40 bytes between characters (the label's 6 always fit). The stored title stays as sent.
 */
export function advertisementSubject(title: string): string {
  return truncateToBytes(`${ADVERTISEMENT_LABEL}${title}`, LMS_SUBJECT_MAX_BYTES)
}
