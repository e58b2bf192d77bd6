import { deliveryStatusForCode } from './delivery/delivery-status.js'
import type { CallFailure, GroupEntry, SendRequest, SmsProvider } from './providers/provider.js'

/**
 * One attempt's conversation with the provider, in the group API's phases (docs/provider.md#when-the-outcome-is-unknown): a group
 * left open by an earlier attempt is read back first; a new group is created and its id recorded before any message
 * is added; the messages are added; the group is sent, once. Nothing here writes to the database except through
 * `recordGroup`, and nothing is sent again that the provider may already have: an answer that does not come leaves
 * the group open for whoever holds the message next, who reads it back.
 */

/** An entry of a known group: what is recorded for its recipient. */
export interface PlacedEntry extends GroupEntry {
  groupId: string
}

/** What became of the request's recipients that have no entry in `entries`. */
export type Rest =
  /** Every recipient has an entry, or none was left to send. */
  | { kind: 'none' }
  /** Not handed to the provider: send them in a later attempt. Any open group is closed (never sent). */
  | CallFailure
  /** They may be in `groupId`, sent or not: the group stays open and the next holder reads it back. */
  | { kind: 'unresolved'; groupId: string; error: string }
  /** The lease could not be kept (or the group not recorded): stopped before the next call, nothing to write. */
  | { kind: 'stopped'; groupId: string | null; error: string }

export interface HandOverOutcome {
  /** Final outcomes per recipient: taken by the provider (with its message id) or refused by it. */
  entries: PlacedEntry[]
  rest: Rest
  /** The group sent in this attempt, whose taken entries the provider hears of once recorded (the mock reports them). */
  sentGroupId: string | null
}

export interface HandOverSteps {
  provider: SmsProvider
  /** The recipients still to send (PENDING in the database), with their texts. */
  request: SendRequest
  /** The group an earlier attempt left open, read back before anything is sent. */
  openGroupId: string | null
  /** Resolve the open group only, send nothing new (the message expired or ran out of attempts): why. */
  sendNothingNew: string | null
  /** Throws when this instance may not make another provider call (its lease is not known to outlast the call). */
  beforeCall(): Promise<void>
  /**
   * Records `groupId` as the attempt's open group, with the outcomes already known (of a group read back), in one
   * transaction, before any message is added to it; throws when it cannot (nothing is added then).
   */
  recordGroup(groupId: string, known: PlacedEntry[]): Promise<void>
}

/** Thrown by `beforeCall` and `recordGroup`'s callers: this instance must not call the provider again. */
export class HandOverStopped extends Error {}

const takes = (entry: GroupEntry) => deliveryStatusForCode(entry.statusCode) !== 'FAILED'
const placed = (groupId: string) => (entry: GroupEntry): PlacedEntry => ({ ...entry, groupId })

export async function handOverInGroup(steps: HandOverSteps): Promise<HandOverOutcome> {
  const { provider, request } = steps
  const known: PlacedEntry[] = []
  /** Taken entries of the open group, not sent yet: they go out when it is sent. */
  let waiting: PlacedEntry[] = []
  let groupId: string | null = steps.openGroupId
  const outcome = (rest: Rest, sentGroupId: string | null = null): HandOverOutcome => ({ entries: known, rest, sentGroupId })

  try {
    if (groupId !== null) {
      await steps.beforeCall()
      const read = await provider.readGroup(groupId, request.messages)
      if (read.kind === 'retryable' || read.kind === 'rejected') {
        return outcome({ kind: 'unresolved', groupId, error: `group ${groupId} could not be read back: ${read.error}` })
      }
      if (read.kind === 'missing') {
        // The provider never had it, so it holds none of these messages.
        groupId = null
      } else if (read.sent) {
        // Whatever is in a sent group is final: taken, or refused or failed by the provider. The rest never went.
        known.push(...read.entries.map(placed(groupId)))
        groupId = null
      } else {
        // Not sent yet: refused entries are final, taken ones go out when this holder sends the group.
        known.push(...read.entries.filter((entry) => !takes(entry)).map(placed(groupId)))
        waiting = read.entries.filter(takes).map(placed(groupId))
      }
    }

    const placedAlready = new Set([...known, ...waiting].map((entry) => entry.recipientIndex))
    const toAdd = request.messages.filter((message) => !placedAlready.has(message.recipientIndex))
    if (steps.sendNothingNew !== null) {
      // The group read back accounts for every recipient: nothing is left to fail.
      if (toAdd.length === 0 && waiting.length === 0) return outcome({ kind: 'none' })
      // Closed unsent: only this claim could send it, and it will not.
      return outcome({ kind: 'rejected', error: steps.sendNothingNew })
    }
    if (groupId === null) {
      if (toAdd.length === 0) return outcome({ kind: 'none' })
      await steps.beforeCall()
      const created = await provider.createGroup(request)
      if (created.kind !== 'ok') return outcome(created)
      groupId = created.groupId
      try {
        await steps.recordGroup(groupId, known)
      } catch (error) {
        // An empty group that nobody will send: nothing went out.
        return outcome({ kind: 'stopped', groupId: null, error: `group ${groupId} could not be recorded: ${String(error)}` })
      }
    }

    let unanswered = 0
    if (toAdd.length > 0) {
      await steps.beforeCall()
      const added = await provider.addMessages(groupId, { ...request, messages: toAdd })
      if (added.kind === 'retryable') {
        return outcome({ kind: 'unresolved', groupId, error: `adding to group ${groupId}: ${added.error}` })
      }
      // Refused as a whole: the group holds none of these, and is closed unsent.
      if (added.kind === 'rejected') return outcome(added)
      known.push(...added.entries.filter((entry) => !takes(entry)).map(placed(groupId)))
      waiting.push(...added.entries.filter(takes).map(placed(groupId)))
      unanswered = toAdd.length - added.entries.length
    }
    if (waiting.length === 0 && unanswered === 0) return outcome({ kind: 'none' })

    await steps.beforeCall()
    const sent = await provider.sendGroup(groupId)
    if (sent.kind === 'rejected' && (await showsNothingSent(steps, groupId))) {
      // Refused for good (a 4xx other than 429) and nothing went out: sending the group again would only be refused
      // again at every attempt. The group is closed unsent, and what it was to carry ends FAILED now.
      return outcome({ kind: 'rejected', error: `sending group ${groupId}: ${sent.error}` })
    }
    if (sent.kind !== 'ok') {
      // No answer may hide a send that went out, and a group is sent once, so a refusal may mean it already was:
      // either way only its read-back can say, at the next attempt when it was not read back here.
      return outcome({ kind: 'unresolved', groupId, error: `sending group ${groupId}: ${sent.error}` })
    }
    known.push(...waiting)
    if (unanswered > 0) {
      // The add answer left some recipients out: the group itself knows whether it holds them.
      return outcome({ kind: 'unresolved', groupId, error: `group ${groupId} sent; ${unanswered} recipients unconfirmed` }, groupId)
    }
    return outcome({ kind: 'none' }, groupId)
  } catch (error) {
    if (error instanceof HandOverStopped) return outcome({ kind: 'stopped', groupId, error: error.message })
    throw error
  }
}

/**
 * Whether the group, read back right after its send was refused, shows that nothing went out: it is still PENDING, or
 * the provider has no such group. A read-back without an answer says nothing, and the group stays open.
 */
async function showsNothingSent(steps: HandOverSteps, groupId: string): Promise<boolean> {
  await steps.beforeCall()
  const read = await steps.provider.readGroup(groupId, steps.request.messages)
  return read.kind === 'missing' || (read.kind === 'ok' && !read.sent)
}
