import type { RevocationReason, Role } from '../../db/schema.js'
import type { AuditEvent } from '../audit/record.js'
import { maskPhone } from '../sms/phone.js'

/**
 * The audit events of sign-in and accounts, built in one place so that an event says the same thing whichever flow
 * records it. None carries a password, a hash, a token or a whole phone number: only ids, reasons and counts.
 */

/** Why a known user's sign-in failed (LOGIN_FAILED). */
export type LoginFailureReason =
  | 'WRONG_PASSWORD'
  | 'TENANT_NOT_ACTIVE'
  | 'USER_NOT_ACTIVE'
  | 'WRONG_CURRENT_PASSWORD'
  | 'WRONG_SECOND_FACTOR'
  | 'PASSKEY_INVALID'

/** How a sign-in proved the user: a password (and a second factor if the user has one), or a passkey alone. */
export type SignInMethod = 'password' | 'passkey'

/**
 * `method`: password or passkey; `secondFactor`: the method the login's second step passed with
 * (lib/sign-in/login-second-step.ts), if it had one.
 */
export function loginSucceeded(
  userId: number,
  session: { sid: string; deviceCategory: string },
  method: SignInMethod,
  secondFactor?: 'TOTP' | 'SMS' | 'RECOVERY_CODE',
): AuditEvent {
  const details = { sessionId: session.sid, deviceCategory: session.deviceCategory, method }
  return { type: 'LOGIN_SUCCEEDED', targetId: userId, details: secondFactor ? { ...details, secondFactor } : details }
}

/** A passkey's failure says so (`method: passkey`); a password's carries the reason alone, as it always has. */
export function loginFailed(userId: number, reason: LoginFailureReason, method?: 'passkey'): AuditEvent {
  return { type: 'LOGIN_FAILED', targetId: userId, details: method ? { reason, method } : { reason } }
}

export function loginLocked(userId: number, lock: { lockedUntil: Date; failures: number }): AuditEvent {
  return { type: 'LOGIN_LOCKED', targetId: userId, details: { lockedUntil: lock.lockedUntil.toISOString(), failures: lock.failures } }
}

/**
 * A change that also ended the user's sessions carries how many (`endedSessions`) instead of one SESSION_REVOKED
 * each: those sessions ended because of the change, which is the act the log records.
 */
export function passwordChanged(userId: number, endedSessions: number): AuditEvent {
  return { type: 'PASSWORD_CHANGED', targetId: userId, details: { endedSessions } }
}

export function passwordReset(userId: number, endedSessions: number): AuditEvent {
  return { type: 'PASSWORD_RESET', targetId: userId, details: { endedSessions } }
}

export function userCreated(userId: number, role: Role): AuditEvent {
  return { type: 'USER_CREATED', targetId: userId, details: { role } }
}

export function userDeleted(userId: number, endedSessions: number): AuditEvent {
  return { type: 'USER_DELETED', targetId: userId, details: { endedSessions } }
}

// A login id may be, or hold, a phone number (a common choice of id): the log masks any run of nine digits or more
// as it masks every number, so that no event carries a whole one.
const PHONE_LIKE = /\d(?:[ -]?\d){8,}/g

function maskedLoginId(loginId: string): string {
  return loginId.replace(PHONE_LIKE, (run) => maskPhone(run))
}

export function loginIdChanged(userId: number, previousLoginId: string, loginId: string): AuditEvent {
  const details = { previousLoginId: maskedLoginId(previousLoginId), loginId: maskedLoginId(loginId) }
  return { type: 'LOGIN_ID_CHANGED', targetId: userId, details }
}

/** One SESSION_REVOKED per session the user ended (logout, logout-all, revoking from the session list). */
export function sessionsRevoked(sids: readonly string[], reason: RevocationReason): AuditEvent[] {
  return sids.map((sid) => ({ type: 'SESSION_REVOKED', targetId: sid, details: { reason } }))
}
