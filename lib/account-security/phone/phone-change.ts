import { bindAuditOrigin } from '../../../db/repos/audit/audit-events.js'
import { findTenantById, type Tenant } from '../../../db/repos/tenancy/tenants.js'
import { lockUser, replacePhone, type UserRecord } from '../../../db/repos/tenancy/users.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import type { AuditOrigin } from '../../audit/record.js'
import { AppError } from '../../errors.js'
import { enqueueSystemSms, type SystemSmsSettings } from '../../dispatch/system-messages.js'
import { currentUserMissing } from '../../sign-in/current-user.js'

/**
 * A change of a user's phone, the only way the service writes one after the user exists. A stolen session must not
 * be able to move an account's phone unseen and then recover the account through it, so every change:
 * - is audited PHONE_CHANGED, both numbers masked, by the users_phone_changed trigger whoever writes the phone (here
 *   with this request's actor, address and request id);
 * - when the old number was verified, tells that number (an ACCOUNT_NOTICE system message: the academy, that the
 *   number was changed, and when), so its owner learns of it on the phone they still hold;
 * - starts, when a verified number is replaced, the wait of SVC_PHONE_CHANGE_HOLD_HOURS during which recovery and the
 *   SMS second factor send nothing to the new number (the users_phone_changed trigger stamps it, whoever writes the
 *   phone; lib/account-security/codes/issue-code.ts reads it).
 * Proving the new number also takes the password (lib/account-security/phone/phone-verification.ts). The notice is queued last: it
 * reserves the tenant's daily quota. When it cannot go (quota spent, no sender) the change is refused with it rather
 * than made silently, and, as the quota's reservation must be its transaction's last statement (refused after it:
 * StatementAfterLastError), what the caller answers with (the user and its tenant) is read before. The caller kicks
 * the dispatcher after its commit and sends no statement after this returns.
 */
export async function changePhone(
  trx: TenantTx,
  sms: SystemSmsSettings,
  owner: { tenantId: number; userId: number },
  phone: string | null,
  origin: AuditOrigin,
): Promise<{ user: UserRecord; tenant: Tenant }> {
  const before = await lockUser(trx, owner.userId)
  if (!before) throw currentUserMissing()
  const tenant = await findTenantById(trx, owner.tenantId)
  if (!tenant) throw new AppError('INTERNAL_ERROR', 'user without a tenant')
  if (before.phone === phone) return { user: before, tenant }
  // The users_phone_changed trigger records PHONE_CHANGED for every writer; this one tells it who acts.
  await bindAuditOrigin(trx, origin)
  const after = await replacePhone(trx, owner.userId, phone)
  if (!after) throw currentUserMissing()
  if (before.phone !== null && before.phoneVerifiedAt !== null) {
    const text = phoneChangedNotice(tenant.name, sms.clock(), sms.dailyQuota.timeZone)
    await enqueueSystemSms(trx, sms, { tenantId: owner.tenantId, to: before.phone, text, kind: 'ACCOUNT_NOTICE' })
  }
  return { user: after, tenant }
}

/**
 * The notice to the replaced number, in Korean and in characters EUC-KR has (an SMS unless the academy's name needs
 * more): the academy, what changed, when (minutes, in SVC_TIME_ZONE), and what to do if it was not the owner. It names
 * neither number: the old one knows itself, and the new one may be an attacker's.
 */
export function phoneChangedNotice(tenantName: string, at: Date, timeZone: string): string {
  const part = (type: Intl.DateTimeFormatPartTypes, parts: Intl.DateTimeFormatPart[]) => parts.find((p) => p.type === type)?.value
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at)
  const when = `${part('year', parts)}-${part('month', parts)}-${part('day', parts)} ${part('hour', parts)}:${part('minute', parts)}`
  return `[${tenantName}] ${when}에 계정의 휴대폰 번호가 변경되었습니다. 본인이 아니면 학원에 문의하세요.`
}
