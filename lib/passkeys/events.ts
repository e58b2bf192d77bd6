import type { AuditDetails, AuditEvent } from '../audit/record.js'

/** The audit events of a user's passkeys: the user is the target; the passkey is named by its id and name only. */
export function passkeyAdded(userId: number, passkey: { id: number; name: string }): AuditEvent {
  return { type: 'PASSKEY_ADDED', targetId: userId, details: { passkeyId: passkey.id, name: passkey.name } }
}

/** One event per passkey the user removed; one for all of them when the user was deleted (`count`). */
export function passkeyRemoved(userId: number, removed: { passkeyId: number } | { deletedUser: number }): AuditEvent {
  const details: AuditDetails =
    'passkeyId' in removed ? { passkeyId: removed.passkeyId, reason: 'REMOVED_BY_USER' } : { reason: 'USER_DELETED', count: removed.deletedUser }
  return { type: 'PASSKEY_REMOVED', targetId: userId, details }
}
