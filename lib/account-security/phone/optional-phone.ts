import { AppError } from '../../errors.js'
import { normalizePhone } from '../../sms/phone.js'

/**
 * A profile phone in its stored form: absent, null or blank means "no phone"; anything else must be a valid
 * number (INVALID_PHONE_NUMBER otherwise), normalised like every phone in the service.
 */
export function normalizeOptionalPhone(phone: string | null | undefined): string | null {
  if (phone === undefined || phone === null || phone.trim() === '') return null
  const normalized = normalizePhone(phone)
  if (!normalized) throw new AppError('INVALID_PHONE_NUMBER', 'phone is not a valid phone number')
  return normalized
}
