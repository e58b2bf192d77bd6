import type { AuditEvent } from '../../audit/record.js'

/** A factor a user enables or disables; recovery codes are not one (RECOVERY_CODES_REGENERATED). */
export type FactorMethod = 'TOTP' | 'SMS'

export function mfaEnabled(userId: number, method: FactorMethod): AuditEvent {
  return { type: 'MFA_ENABLED', targetId: userId, details: { method } }
}

/** `recoveryCodesVoided`: the last factor went, and the recovery codes with it. */
export function mfaDisabled(userId: number, method: FactorMethod, recoveryCodesVoided: boolean): AuditEvent {
  return { type: 'MFA_DISABLED', targetId: userId, details: { method, recoveryCodesVoided } }
}

export function recoveryCodesRegenerated(userId: number): AuditEvent {
  return { type: 'RECOVERY_CODES_REGENERATED', targetId: userId }
}
