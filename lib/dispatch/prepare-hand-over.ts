import {
  findClaimedMessage,
  findUnsentRecipients,
  leaveOutUnconsentedRecipients,
  handOverClaimedMessage,
  optOutListedRecipients,
  releaseClaim,
  type Claim,
  type ClaimedMessage,
  type UnsentRecipient,
} from '../../db/repos/dispatch/dispatch.js'
import { consentRequired } from '../../db/repos/advertising/advertising-settings.js'
import { releaseDailyRecipients } from '../../db/repos/sms/sms-quota.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { advertisementSubject, frameAdvertisement } from '../advertising/advertising.js'
import { consentLiveAfter } from '../advertising/consents.js'
import type { Clock } from '../clock.js'
import type { GroupOwner, OutgoingSms, SendRequest } from './providers/provider.js'
import { alimtalkMessage } from './alimtalk-message.js'
import { renderContent, type RenderFields } from '../sms/sizing.js'
import type { OutcomeWriter } from './attempt-outcome.js'

/** What the hand-over transaction needs beyond the claim; fixed for the dispatcher's life. */
export interface HandOverSettings {
  maxAttempts: number
  /** SVC_SMS_SYSTEM_SENDER: a system message from this number is not held for the tenant's sender number. */
  systemSender: string | null
  /** Read afresh at every hand-over: a claim made at 20:59:59 is not handed over at 21:00. */
  advertisingOpen(): boolean
  /** The day on which late opt-outs get their quota back is this zone's. */
  timeZone: string
  outcomes: Pick<OutcomeWriter, 'unsendableReason' | 'failUnsendable'>
  /** SVC_AD_CONSENT_DAYS, and the clock a consent's life is judged by at hand-over. */
  consentDays: number
  clock: Clock
}

/** What an attempt hands over: the recipients still to send, and a group an earlier attempt left open. */
export interface PreparedHandOver {
  request: SendRequest
  attempt: number
  openGroupId: string | null
  /** Resolve the open group and end the message: why (expired, out of attempts), or null to send. */
  sendNothingNew: string | null
}

/**
 * Each recipient's text. Stored content is never rendered; each recipient gets its own personalised text only here,
 * and an advertisement is framed with what it was accepted with (lib/advertising/advertising.ts). A system message's text is
 * the service's own, sent as written: a tenant name may contain `{name}`.
 */
function messageText(message: ClaimedMessage): (recipient: RenderFields) => string {
  if (message.kind !== 'STAFF') return () => message.content
  if (message.purpose !== 'ADVERTISEMENT') return (recipient) => renderContent(message.content, recipient)
  const frame = { senderName: message.adSenderName!, optOutNumber: message.adOptOutNumber! }
  return (recipient) => frameAdvertisement(renderContent(message.content, recipient), frame)
}

/** An LMS message's subject: its title, after the `(광고)` label for an advertisement. */
function messageSubject(message: ClaimedMessage): string {
  return message.purpose === 'ADVERTISEMENT' ? advertisementSubject(message.title) : message.title
}

/**
 * A number put on the opt-out list after an advertisement was accepted (by staff, or read from the provider's 080
 * list) must not get it either, nor, while the tenant requires consent, one whose consent was withdrawn or lapsed
 * since: its recipients are left out at every hand-over (OPTED_OUT first, then NO_CONSENT), and the quota gets
 * them back on the day the message was accepted.
 */
async function leaveOutLateRefusals(trx: TenantTx, tenantId: number, message: ClaimedMessage, settings: HandOverSettings): Promise<void> {
  const listed = await optOutListedRecipients(trx, message.id)
  const unconsented = (await consentRequired(trx))
    ? await leaveOutUnconsentedRecipients(trx, message.id, consentLiveAfter(settings.clock(), settings.consentDays))
    : 0
  await releaseDailyRecipients(trx, tenantId, { at: message.createdAt, timeZone: settings.timeZone }, listed + unconsented)
}

/** The recipients still to send (PENDING), each with its message as `compose` makes it (one object per recipient). */
async function requestOf(
  trx: TenantTx,
  owner: GroupOwner,
  compose: (recipient: UnsentRecipient) => OutgoingSms,
): Promise<SendRequest> {
  const recipients = await findUnsentRecipients(trx, owner.smsId)
  return { ...owner, messages: recipients.map(compose) }
}

/**
 * The hand-over: in one transaction, checks the claim, counts the attempt and marks the message as handed to
 * the provider. Once this commits the provider may be called; before, the claim can still be given back. A
 * message that can never be sent ends here, unless a group of an earlier attempt is open: that is read back first.
 * Null when there is nothing to hand over (the claim given back, or the message ended).
 */
export async function prepareHandOver(trx: TenantTx, claim: Claim, settings: HandOverSettings): Promise<PreparedHandOver | null> {
  const { outcomes } = settings
  const message = await handOverClaimedMessage(trx, claim, settings.maxAttempts, settings.systemSender, settings.advertisingOpen())
  if (!message) {
    const unsent = await findClaimedMessage(trx, claim)
    const reason = unsent ? outcomes.unsendableReason(unsent) : null
    if (unsent && reason !== null && unsent.openGroupId !== null) {
      // Only read back, never sent: the recipients' numbers are all it needs.
      const owner = { tenantSlug: unsent.tenantSlug, smsId: claim.smsId, kind: unsent.kind }
      const request = await requestOf(trx, owner, (recipient) => ({ recipientIndex: recipient.recipientIndex, to: recipient.phone, from: '', text: '', type: 'SMS' }))
      return { attempt: unsent.dispatchAttempts, openGroupId: unsent.openGroupId, sendNothingNew: reason, request }
    }
    if (unsent && reason !== null) await outcomes.failUnsendable(trx, claim, unsent.dispatchAttempts, reason)
    // Held since the claim (tenant suspended, sender number rejected or replaced, an advertisement whose quiet
    // hours have begun): give it back untouched, PENDING.
    await releaseClaim(trx, claim)
    return null
  }
  if (message.purpose === 'ADVERTISEMENT') await leaveOutLateRefusals(trx, claim.tenantId, message, settings)
  const textFor = messageText(message)
  const owner = { tenantSlug: message.tenantSlug, smsId: message.id, kind: message.kind }
  // An AlimTalk message travels in the same groups, claims and hand-over as SMS; only each recipient's message differs.
  const subject = message.messageType === 'LMS' ? messageSubject(message) : undefined
  const request = await requestOf(trx, owner, (recipient) =>
    message.channel === 'ALIMTALK'
      ? alimtalkMessage(message, recipient)
      : {
          recipientIndex: recipient.recipientIndex,
          to: recipient.phone,
          from: message.senderNumber ?? '',
          text: textFor(recipient),
          type: message.messageType,
          subject,
        },
  )
  return { attempt: message.dispatchAttempts, openGroupId: message.openGroupId, sendNothingNew: null, request }
}
