import { revokeSessions } from '../../db/repos/sessions.js'
import { findCredentialsById, updatePasswordHash } from '../../db/repos/users.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { AppError } from '../errors.js'
import { currentUserMissing } from './current-user.js'
import { hashPassword, verifyPassword } from './password-hash.js'
import { checkPasswordPolicy } from './password-policy.js'

/**
 * POST /v1/me/password: the current password proves the caller (AUTH_013), the new one meets the policy
 * (AUTH_012), and every other session of the user ends (PASSWORD_CHANGED, their access tokens blacklisted at
 * once). The caller's own session stays.
 */
export async function changeOwnPassword(
  trx: TenantTx,
  bcryptCost: number,
  caller: { userId: number; sid: string },
  passwords: { currentPassword: string; newPassword: string },
): Promise<void> {
  const credentials = await findCredentialsById(trx, caller.userId)
  if (!credentials) throw currentUserMissing()
  if (!(await verifyPassword(passwords.currentPassword, credentials.passwordHash))) throw new AppError('AUTH_013')
  checkPasswordPolicy(passwords.newPassword, credentials.userLoginId)
  // The slow hash runs before the first write, so no row lock is held while it computes.
  const passwordHash = await hashPassword(passwords.newPassword, bcryptCost)
  await updatePasswordHash(trx, credentials.id, passwordHash)
  await revokeSessions(trx, { userId: caller.userId, exceptSid: caller.sid }, 'PASSWORD_CHANGED')
}
