import type { Env } from '../env.js'

/**
 * Consent to advertising (docs/api.md#advertising). A consent is live until withdrawn or until SVC_AD_CONSENT_DAYS
 * after it was last confirmed (recorded, or its two-year notice handed to the provider). The law asks the sender to
 * tell every consenting number of its consent every two years: SVC_AD_CONSENT_NOTICE_DAYS after the confirmation,
 * the notice job (lib/advertising/consent-notices.ts) sends it as a system message.
 */

const DAY_MS = 86_400_000

export interface ConsentSettings {
  /** SVC_AD_CONSENT_DAYS. */
  consentDays: number
  /** SVC_AD_CONSENT_NOTICE_DAYS, less than consentDays (lib/env.ts refuses anything else). */
  noticeDays: number
}

export function consentSettings(env: Env): ConsentSettings {
  return { consentDays: env.SVC_AD_CONSENT_DAYS, noticeDays: env.SVC_AD_CONSENT_NOTICE_DAYS }
}

/** A consent confirmed after this instant is live at `now`. */
export function consentLiveAfter(now: Date, consentDays: number): Date {
  return new Date(now.getTime() - consentDays * DAY_MS)
}

/** A consent confirmed at or before this instant is due for its notice at `now`. */
export function noticeDueBefore(now: Date, noticeDays: number): Date {
  return new Date(now.getTime() - noticeDays * DAY_MS)
}

// Building a DateTimeFormat costs far more than using one: one per zone, kept.
const dateFormats = new Map<string, Intl.DateTimeFormat>()

/** `at` as a date of the tenant-facing calendar: 2026년 3월 2일. */
function localDate(at: Date, timeZone: string): string {
  let format = dateFormats.get(timeZone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric' })
    dateFormats.set(timeZone, format)
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((part) => [part.type, part.value]))
  return `${parts.year}년 ${parts.month}월 ${parts.day}일`
}

export interface ConsentNotice {
  /** The tenant's name: who the consent was given to. */
  senderName: string
  /** When the number first consented. */
  consentedAt: Date
  /** The tenant's free 080 number, digits. */
  optOutNumber: string
  timeZone: string
}

/**
 * The notice's text (Enforcement Decree of the Information and Communications Network Act, article 62-3): who the
 * consent was given to, when, that it stands, and how to refuse (the free opt-out number). Not an advertisement, so
 * not framed with `(광고)`.
 */
export function consentNoticeText(notice: ConsentNotice): string {
  const { senderName, optOutNumber } = notice
  return (
    `[${senderName}] 광고성 정보 수신동의 안내\n` +
    `${localDate(notice.consentedAt, notice.timeZone)}에 ${senderName}의 광고성 정보 수신에 동의하셨으며, 동의는 유지됩니다.\n` +
    `수신을 원하지 않으시면 무료거부 ${optOutNumber}`
  )
}
