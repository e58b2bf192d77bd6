import QRCode from 'qrcode'
import { findTenantById } from '../../db/repos/tenants.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { recordAuditEvent, type AuditOrigin } from '../audit/record.js'
import { findCurrentUser } from '../auth/current-user.js'
import { AppError } from '../errors.js'
import { mfaDisabled, mfaEnabled, recoveryCodesRegenerated } from './events.js'
import {
  findSecondFactors,
  hasFactor,
  issueRecoveryCodes,
  tidyAfterDisable,
  upsertSecondFactors,
  type FactorOwner,
} from './factors.js'
import { openSecret, sealSecret } from './sealed-secret.js'
import type { MfaSettings } from './settings.js'
import { matchingStep, newTotpSecret, totpUri } from './totp.js'

// Enrolment and management under /v1/me/mfa, each in the request transaction of a signed-in user. The routes that
// change a factor prove the current password first (plugins/password-proof.ts); confirming a TOTP enrolment needs
// only its code, since starting it took the password.

export interface TotpEnrolment {
  secret: string
  otpauthUri: string
  /** The URI as a QR code, an SVG data URL an <img> shows as it is. */
  qrCode: string
}

/**
 * POST /v1/me/mfa/totp: a new secret, pending until its first code confirms it. A TOTP already enabled keeps
 * working meanwhile (moving to a new phone app), and a pending one neither asks for a code at login nor passes one.
 */
export async function startTotpEnrolment(trx: TenantTx, settings: MfaSettings, owner: FactorOwner): Promise<TotpEnrolment> {
  const user = await findCurrentUser(trx, owner.userId)
  const tenant = await findTenantById(trx, owner.tenantId)
  const secret = newTotpSecret()
  await upsertSecondFactors(trx, owner, { totpPendingSecret: sealSecret(settings.key, owner, secret) })
  const otpauthUri = totpUri(secret, tenant?.name ?? 'svc', user.userLoginId)
  const svg = await QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return { secret, otpauthUri, qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` }
}

/**
 * POST /v1/me/mfa/totp/confirm: the pending secret's code makes it the user's TOTP (the step it used is taken, so
 * that code signs in nowhere), and a new set of recovery codes is issued, the old one void. OTP_INVALID for a
 * wrong code, or when no enrolment is pending.
 */
export async function confirmTotpEnrolment(
  trx: TenantTx,
  settings: MfaSettings,
  owner: FactorOwner,
  code: string,
  origin: AuditOrigin,
): Promise<string[]> {
  const row = await findSecondFactors(trx, owner, true)
  const secret = row?.totpPendingSecret ? openSecret(settings.key, owner, row.totpPendingSecret) : null
  const step = secret === null ? null : matchingStep(secret, code)
  if (step === null) throw new AppError('OTP_INVALID')
  await upsertSecondFactors(trx, owner, {
    totpSecret: row!.totpPendingSecret,
    totpEnabledAt: new Date(),
    totpLastStep: step,
    totpPendingSecret: null,
  })
  await recordAuditEvent(trx, owner.tenantId, origin, mfaEnabled(owner.userId, 'TOTP'))
  return issueRecoveryCodes(trx, settings, owner)
}

/** POST /v1/me/mfa/totp/disable: TOTP off (a pending enrolment too); with no factor left, the recovery codes go. */
export async function disableTotp(trx: TenantTx, owner: FactorOwner, origin: AuditOrigin): Promise<void> {
  const row = await findSecondFactors(trx, owner, true)
  if (!row) return
  await upsertSecondFactors(trx, owner, { totpSecret: null, totpEnabledAt: null, totpLastStep: null, totpPendingSecret: null })
  const voided = await tidyAfterDisable(trx, owner)
  if (row.totpEnabledAt !== null) await recordAuditEvent(trx, owner.tenantId, origin, mfaDisabled(owner.userId, 'TOTP', voided))
}

/** POST /v1/me/mfa/sms: codes to the verified phone become a factor (PHONE_NOT_VERIFIED without one). */
export async function enableSmsFactor(trx: TenantTx, owner: FactorOwner, origin: AuditOrigin): Promise<void> {
  const user = await findCurrentUser(trx, owner.userId)
  if (user.phone === null || user.phoneVerifiedAt === null) throw new AppError('PHONE_NOT_VERIFIED')
  const row = await findSecondFactors(trx, owner, true)
  if (row?.smsEnabledAt != null) return
  await upsertSecondFactors(trx, owner, { smsEnabledAt: new Date() })
  await recordAuditEvent(trx, owner.tenantId, origin, mfaEnabled(owner.userId, 'SMS'))
}

/** POST /v1/me/mfa/sms/disable: the SMS factor off; with no factor left, the recovery codes go. */
export async function disableSmsFactor(trx: TenantTx, owner: FactorOwner, origin: AuditOrigin): Promise<void> {
  const row = await findSecondFactors(trx, owner, true)
  if (row?.smsEnabledAt == null) return
  await upsertSecondFactors(trx, owner, { smsEnabledAt: null })
  const voided = await tidyAfterDisable(trx, owner)
  await recordAuditEvent(trx, owner.tenantId, origin, mfaDisabled(owner.userId, 'SMS', voided))
}

/** POST /v1/me/mfa/recovery-codes: a new set, the old one void; MFA_NOT_ENABLED while the user has no factor. */
export async function regenerateRecoveryCodes(
  trx: TenantTx,
  settings: MfaSettings,
  owner: FactorOwner,
  origin: AuditOrigin,
): Promise<string[]> {
  if (!hasFactor(await findSecondFactors(trx, owner, true))) throw new AppError('MFA_NOT_ENABLED')
  const codes = await issueRecoveryCodes(trx, settings, owner)
  await recordAuditEvent(trx, owner.tenantId, origin, recoveryCodesRegenerated(owner.userId))
  return codes
}
