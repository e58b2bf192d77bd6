import {
  decideSenderSetting,
  lockSenderSetting,
  senderNumberInUse,
  type ApprovalDecision,
  type SenderSettingRecord,
} from '../../db/repos/sms/sender-settings.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { AppError } from '../errors.js'
import { normalizePhone } from './phone.js'

const digitsOf = (number: string) => normalizePhone(number) ?? number

/**
 * Records the operator's decision on the tenant's sender number. Every tenant sends through one provider account,
 * so an approval must be about the number the operator reviewed and one no other tenant sends from:
 * - `reviewedNumber` (any written form), when given, must be the tenant's current number, else
 *   SENDER_NUMBER_CHANGED: the owner may have replaced it after the operator listed it;
 * - a number APPROVED for another tenant is never approved (SENDER_NUMBER_IN_USE); it may still be rejected.
 * The row is locked first, so the owner's PUT cannot change the number between the checks and the write.
 */
export async function recordSenderDecision(
  trx: TenantTx,
  tenantId: number,
  decision: ApprovalDecision,
  reviewedNumber: string | undefined,
): Promise<SenderSettingRecord> {
  const current = await lockSenderSetting(trx)
  if (!current) throw new AppError('SENDER_SETTING_NOT_FOUND')
  const number = current.senderNumber
  if (reviewedNumber !== undefined && (number === null || digitsOf(reviewedNumber) !== digitsOf(number))) {
    throw new AppError('SENDER_NUMBER_CHANGED')
  }
  if (decision.status === 'APPROVED' && number !== null && (await senderNumberInUse(trx, tenantId, number))) {
    throw new AppError('SENDER_NUMBER_IN_USE')
  }
  const updated = await decideSenderSetting(trx, decision)
  if (!updated) throw new AppError('SENDER_SETTING_NOT_FOUND')
  return updated
}
