import type { StoredRecipient } from '../../db/schema.js'
import { AppError } from '../errors.js'
import { normalizePhone } from './phone.js'
import { renderContent } from './sizing.js'

/** More than this many recipients in one send (or one group) is TOO_MANY_RECIPIENTS. */
export const MAX_RECIPIENTS = 10_000

/** A recipient as a client writes it. */
export interface RecipientInput {
  phone: string
  name?: string | null
  studentId?: number | null
  className?: string | null
  recipientRole?: string | null
}

/** Checked before any phone is read, so 20,000 bad numbers answer TOO_MANY_RECIPIENTS, not the first bad index. */
export function assertRecipientCount(count: number): void {
  if (count === 0) throw new AppError('RECIPIENTS_REQUIRED')
  if (count > MAX_RECIPIENTS) {
    throw new AppError('TOO_MANY_RECIPIENTS', `${count} recipients given; at most ${MAX_RECIPIENTS} are allowed.`)
  }
}

/**
 * Normalises every phone to stored digits. The first invalid one answers INVALID_PHONE_NUMBER naming where it
 * is (`recipients[3].phone`); the number itself is never echoed, since problem details end up in client logs.
 */
export function normalizeRecipients(
  recipients: readonly RecipientInput[],
  fieldOf: (index: number) => string = (index) => `recipients[${index}].phone`,
): StoredRecipient[] {
  return recipients.map((recipient, index) => {
    const phone = normalizePhone(recipient.phone)
    if (phone === null) {
      const field = fieldOf(index)
      throw new AppError('INVALID_PHONE_NUMBER', `${field} is not a valid phone number.`, {
        errors: [{ field, message: 'is not a valid phone number' }],
      })
    }
    return {
      phone,
      name: recipient.name ?? null,
      studentId: recipient.studentId ?? null,
      className: recipient.className ?? null,
      recipientRole: recipient.recipientRole ?? null,
    }
  })
}

/**
 * Within one send (docs/api.md#deduplication), recipients with the same stored phone and the same rendered text are one
 * recipient (the first keeps its fields and its place); the same phone with another rendering (siblings named
 * differently) stays. One pass with a hash set, no per-recipient query; content without placeholders renders the
 * same for everyone, so then only the phone counts.
 *
 * Renderings that differ only by a name ("", " ", "  ", ...) would let one phone receive the send thousands of times
 * and spend the quota on it, so at most `maxPerPhone` (SVC_SMS_MAX_PER_PHONE) recipients that remain may share a
 * phone: beyond that the send is refused, TOO_MANY_FOR_ONE_PHONE, without naming the number.
 */
export function mergeRecipients<R extends StoredRecipient>(
  content: string,
  recipients: readonly R[],
  maxPerPhone: number,
  // An AlimTalk's recipients carry their rendered text (lib/kakao/alimtalk-send.ts), which then is the rendering.
  renderingOf?: (recipient: R) => string,
): R[] {
  const personal = renderingOf !== undefined || content.includes('{name}') || content.includes('{className}')
  const render = renderingOf ?? ((recipient: R) => renderContent(content, recipient))
  const seen = new Set<string>()
  const perPhone = new Map<string, number>()
  const kept: R[] = []
  for (const recipient of recipients) {
    const key = personal ? `${recipient.phone}\u0000${render(recipient)}` : recipient.phone
    if (seen.has(key)) continue
    seen.add(key)
    const onPhone = (perPhone.get(recipient.phone) ?? 0) + 1
    if (onPhone > maxPerPhone) {
      throw new AppError('TOO_MANY_FOR_ONE_PHONE', `More than ${maxPerPhone} recipients of this send share one phone number.`)
    }
    perPhone.set(recipient.phone, onPhone)
    kept.push(recipient)
  }
  return kept.length === recipients.length ? (recipients as R[]) : kept
}
