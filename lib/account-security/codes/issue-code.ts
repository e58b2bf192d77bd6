import { countPhoneCode, countTenantVerification, countUserCode } from '../../../db/repos/account-security/one-time-code-limits.js'
import { phoneChangeHeld } from '../../../db/repos/tenancy/users.js'
import { replaceCode } from '../../../db/repos/account-security/one-time-codes.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import { AppError } from '../../errors.js'
import { enqueueSystemSms, type SystemSmsSettings } from '../../dispatch/system-messages.js'
import { generateCode, hashCode, phoneKeyOf, type CodeBinding } from './codes.js'
import type { OneTimeCodeSettings } from './settings.js'
import { codeSmsText } from './sms-text.js'

export interface CodeIssuing {
  codes: OneTimeCodeSettings
  sms: SystemSmsSettings
}

/** Whom a code goes to: the binding of its hash, and the academy whose name the SMS carries. */
export interface CodeRecipient extends CodeBinding {
  tenantName: string
}

/** What the caller may tell: seconds until the code expires, and until a new one may be asked for. */
export interface IssuedCode {
  expiresIn: number
  resendAfter: number
}

function rateLimited(retryAfterSeconds: number, detail: string): AppError {
  return new AppError('OTP_RATE_LIMITED', detail, { headers: { 'retry-after': String(Math.max(1, retryAfterSeconds)) } })
}

/**
 * Issues a new code for (user, purpose) in `trx`, the caller's transaction, and queues its SMS to `recipient.phone`
 * through the outbox; the caller kicks the dispatcher after its commit. The code itself leaves this function only in
 * the SMS text: the row keeps its keyed hash, and the outbox erases the text once the provider has it.
 *
 * Refused with OTP_RATE_LIMITED (Retry-After) within the resend interval of the slot's previous code, and beyond the
 * daily limits (countCode), until the next local midnight. A code to a verified phone (recovery, the SMS second
 * factor) is refused with PHONE_NOT_VERIFIED while the number waits after replacing a verified one
 * (lib/account-security/phone/phone-change.ts). The SMS is queued last because it reserves the tenant's daily quota, whose row stays
 * locked until the transaction ends; beyond that quota the transaction fails (SMS_QUOTA_EXCEEDED). Every refusal is
 * a thrown error, so the caller's transaction rolls back whatever this counted.
 */
export async function issueCode(trx: TenantTx, issuing: CodeIssuing, recipient: CodeRecipient): Promise<IssuedCode> {
  const { codes } = issuing
  if (recipient.purpose !== 'PHONE_VERIFICATION' && (await phoneChangeHeld(trx, recipient.userId, codes.phoneChangeHoldHours))) {
    throw new AppError('PHONE_NOT_VERIFIED', 'The phone was changed recently; codes go to it once the wait is over.')
  }
  const code = generateCode()
  const replaced = await replaceCode(trx, {
    tenantId: recipient.tenantId,
    userId: recipient.userId,
    purpose: recipient.purpose,
    codeHash: hashCode(codes.key, recipient, code),
    phone: recipient.phone,
    ttlSeconds: codes.ttlSeconds,
    resendSeconds: codes.resendSeconds,
  })
  if (replaced.expiresAt === null) throw rateLimited(replaced.secondsToResend, 'A code was sent moments ago; wait before asking again.')
  await countCode(trx, codes, recipient)

  await enqueueSystemSms(trx, issuing.sms, {
    tenantId: recipient.tenantId,
    to: recipient.phone,
    text: codeSmsText(recipient.tenantName, recipient.purpose, code, codes.ttlSeconds),
    kind: 'VERIFICATION_CODE',
    expiresAt: replaced.expiresAt,
  })
  return { expiresIn: codes.ttlSeconds, resendAfter: codes.resendSeconds }
}

/**
 * The daily limits, each refusal OTP_RATE_LIMITED: SVC_OTP_DAILY_LIMIT codes per user; a code to a verified phone
 * also counts for that number across every tenant (the brake on SMS pumping); a code that verifies a number counts
 * only in its own tenant, per number and in the tenant's total (SVC_OTP_TENANT_DAILY_VERIFICATIONS). An unproven
 * number may be anybody's: counting it across tenants let one academy's accounts use up another's, and told whether
 * the number had an account elsewhere.
 */
async function countCode(trx: TenantTx, codes: OneTimeCodeSettings, recipient: CodeRecipient): Promise<void> {
  const { dailyLimit, timeZone } = codes
  const perUser = await countUserCode(trx, recipient, dailyLimit, timeZone)
  if (!perUser.counted) throw rateLimited(perUser.secondsToNextDay, 'Too many codes today for this account.')
  const phoneKey = phoneKeyOf(codes.key, recipient.phone)
  if (recipient.purpose !== 'PHONE_VERIFICATION') {
    const perPhone = await countPhoneCode(trx, phoneKey, dailyLimit, timeZone)
    if (!perPhone.counted) throw rateLimited(perPhone.secondsToNextDay, 'Too many codes today for this phone number.')
    return
  }
  const perTenant = await countTenantVerification(trx, recipient.tenantId, 'tenant', codes.tenantDailyVerifications, timeZone)
  if (!perTenant.counted) throw rateLimited(perTenant.secondsToNextDay, 'Too many phone verifications today in this academy.')
  const perNumber = await countTenantVerification(trx, recipient.tenantId, phoneKey, dailyLimit, timeZone)
  if (!perNumber.counted) throw rateLimited(perNumber.secondsToNextDay, 'Too many codes today for this phone number.')
}
