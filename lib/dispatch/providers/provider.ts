import type { SmsKind } from '../../../db/schema.js'
import type { DeliveryReport } from '../delivery/delivery-report.js'

/**
 * The contract every SMS provider adapter implements: the provider's group API in its phases (docs/provider.md#sending).
 * A group is created first, and its id recorded, before any message can go out; messages are
 * added; the group is sent, once. After a timeout or a crash the group is read back instead of sending again.
 * Adapters never touch the database: the dispatcher turns their answers into recipient rows, so the mock and the
 * live provider share one code path.
 */

/**
 * A KakaoTalk notice's options (docs/provider.md#alimtalk-notices): the frozen channel and provider template, and
 * the recipient's values keyed `#{name}`. `disableSms`: no SMS or LMS when Kakao cannot deliver (fallback NONE).
 */
export interface AlimtalkOptions {
  pfId: string
  templateId: string
  variables: Record<string, string>
  disableSms: boolean
}

/** What one recipient is sent: an SMS or LMS, or an AlimTalk notice (`ATA`) whose text is its rendered template. */
export type OutgoingContent =
  | { from: string; text: string; type: 'SMS' | 'LMS'; subject?: string }
  | { from: string; text: string; type: 'ATA'; kakao: AlimtalkOptions }

export type OutgoingSms = { recipientIndex: number; to: string } & OutgoingContent

/** Whose messages a group carries: named in every message's custom fields, never part of the group's id. */
export interface GroupOwner {
  tenantSlug: string
  smsId: number
  /** STAFF, or a system message's kind: its text (a one-time code) must never reach a log or a metric. */
  kind: SmsKind
}

export interface SendRequest extends GroupOwner {
  messages: OutgoingSms[]
}

/** A recipient of a request and its number: what an answer entry without the custom-field echo is matched by. */
export interface CallRecipient {
  recipientIndex: number
  to: string
}

/**
 * One recipient's message in a group. Its status code says what the provider did with it: `2000`/`3000`/`4000`
 * it took the message (lib/dispatch/delivery/delivery-status.ts), any other code it refused or failed it, for good.
 */
export interface GroupEntry {
  recipientIndex: number
  messageId: string | null
  statusCode: string
  statusMessage: string
}

/**
 * How a call that did not succeed ended. `retryable`: no answer (network error, the time limit), 5xx or 429; the
 * call may or may not have taken effect. `rejected`: any other non-2xx answer; the provider refused the call.
 */
export type CallFailure = { kind: 'retryable'; error: string } | { kind: 'rejected'; error: string }

export type CallResult<T> = ({ kind: 'ok' } & T) | CallFailure

/** A group as read back: whether it was sent, and every message in it that names a recipient of the request. */
export type GroupReadback = CallResult<{ sent: boolean; entries: GroupEntry[] }> | { kind: 'missing' }

/** A group an attempt sent, once its outcome is recorded: whose it is, and the entries the provider took. */
export interface RecordedSend {
  owner: GroupOwner
  groupId: string
  taken: readonly GroupEntry[]
}

/** Applies delivery reports the way the webhook's are applied (lib/dispatch/delivery/apply-reports.ts). */
export type ReportDeliveries = (reports: DeliveryReport[]) => Promise<void>

export interface SmsProvider {
  readonly name: 'mock' | 'extsms'
  /**
   * The adapter's time limit for one call (SVC_SMS_PROVIDER_TIMEOUT_MS; 0 for an in-process provider): a call is
   * started only while the dispatcher's lease outlasts it, so no call can land after another instance took over.
   */
  readonly callTimeoutMs: number
  /** Creates an empty group; nothing can be sent through it before `addMessages` and `sendGroup`. */
  createGroup(owner: GroupOwner): Promise<CallResult<{ groupId: string }>>
  /** Adds the request's messages to a group not yet sent; an entry per message, taken or refused. */
  addMessages(groupId: string, request: SendRequest): Promise<CallResult<{ entries: GroupEntry[] }>>
  /** Sends the group's taken messages. A group is sent once: a second send is refused, never delivered twice. */
  sendGroup(groupId: string): Promise<CallResult<object>>
  /** The group's state and the entries of `recipients` in it; `missing` when the provider has no such group. */
  readGroup(groupId: string, recipients: readonly CallRecipient[]): Promise<GroupReadback>
  /**
   * Called once the outcome of a group an attempt sent is recorded. A provider that produces delivery reports itself
   * (the mock reports every taken recipient DELIVERED at once) hands them to `report`, the same code path as the
   * webhook's. Live providers call the webhook instead and leave this out.
   */
  afterRecorded?(sent: RecordedSend, report: ReportDeliveries): Promise<void>
}
