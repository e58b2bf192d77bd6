import QRCode from 'qrcode'
import type { Kysely } from 'kysely'
import {
  countPendingTotpAttempt,
  findSecondFactors,
  upsertSecondFactors,
  type FactorOwner,
} from '../../../db/repos/account-security/second-factors.js'
import { findTenantById } from '../../../db/repos/tenancy/tenants.js'
import type { DB } from '../../../db/schema.js'
import { withRequestTransaction, type RequestScope, type TenantTx } from '../../../db/tenant-transaction.js'
import { recordAuditEvent, type AuditOrigin } from '../../audit/record.js'
import { findCurrentUser } from '../../sign-in/current-user.js'
import { AppError } from '../../errors.js'
import { mfaDisabled, mfaEnabled, recoveryCodesRegenerated } from './events.js'
import { hasFactor, issueRecoveryCodes, tidyAfterDisable } from './factors.js'
import { openSecret, sealSecret } from './sealed-secret.js'
import type { MfaSettings } from './settings.js'
import { matchingStep, newTotpSecret, totpUri } from './totp.js'

// Enrolment and management under /v1/me/mfa, each in the request transaction of a signed-in user but the
// confirmation, which commits its own (its wrong codes count). The routes that change a factor prove the current
// password first (the route's proof in routes/v1/me/mfa.ts); confirming a TOTP enrolment needs only its code, since starting it took
// the password.

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
  await upsertSecondFactors(trx, owner, { totpPendingSecret: sealSecret(settings.keys, owner, secret), totpPendingAttempts: 0 })
  const otpauthUri = totpUri(secret, tenant?.name ?? 'svc', user.userLoginId)
  const svg = await QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return { secret, otpauthUri, qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` }
}

/**
 * POST /v1/me/mfa/totp/confirm, before the request transaction opens, in a transaction of its own that checks the
 * access token as the request's would (the route's proof in routes/v1/me/mfa.ts): it commits even when the code is refused, so a
 * wrong code counts. The pending secret's code makes it the user's TOTP (the step it used is taken, so that code signs
 * in nowhere), and a new set of recovery codes is issued, the old one void. OTP_INVALID for a wrong code, or when no
 * enrolment is pending; after `maxAttempts` wrong codes the pending secret is discarded, so a stolen session cannot
 * guess its way to the enrolment and its recovery codes.
 */
export async function confirmTotpEnrolment(
  db: Kysely<DB>,
  settings: MfaSettings,
  maxAttempts: number,
  scope: RequestScope & FactorOwner,
  code: string,
  origin: AuditOrigin,
): Promise<string[]> {
  const owner: FactorOwner = { tenantId: scope.tenantId, userId: scope.userId }
  const confirmed = await withRequestTransaction(db, scope, async (trx) => {
    const row = await findSecondFactors(trx, owner, true)
    if (!row?.totpPendingSecret) return null
    const secret = openSecret(settings.keys, owner, row.totpPendingSecret)
    const step = secret === null ? null : matchingStep(secret, code)
    if (step === null) {
      await countPendingTotpAttempt(trx, owner, maxAttempts)
      return null
    }
    await upsertSecondFactors(trx, owner, {
      totpSecret: row.totpPendingSecret,
      totpEnabledAt: new Date(),
      totpLastStep: step,
      totpPendingSecret: null,
    })
    await recordAuditEvent(trx, owner.tenantId, origin, mfaEnabled(owner.userId, 'TOTP'))
    return issueRecoveryCodes(trx, settings, owner)
  })
  if (!confirmed) throw new AppError('OTP_INVALID')
  return confirmed
}

/** POST /v1/me/mfa/totp/disable: TOTP off (a pending enrolment too); with no factor left, the recovery codes go. */
export async function disableTotp(trx: TenantTx, owner: FactorOwner, origin: AuditOrigin): Promise<void> {
  const row = await findSecondFactors(trx, owner, true)
  if (!row) return
  await upsertSecondFactors(trx, owner, { totpSecret: null, totpEnabledAt: null, totpLastStep: null, totpPendingSecret: null, totpPendingAttempts: 0 })
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
