import { describe, expect, it } from 'vitest'
import { replaceCode } from '../../../db/repos/account-security/one-time-codes.js'
import { withTenant } from '../../../db/tenant-transaction.js'
import { NO_ORIGIN } from '../../../lib/audit/record.js'
import { verifyPassword } from '../../../lib/sign-in/password-hash.js'
import { resetPasswordWithCode, type RecoveryDeps } from '../../../lib/account-security/recovery/password-recovery.js'
import type { SecondFactorCheck, SecondFactorProof } from '../../../lib/account-security/recovery/reset-factors.js'
import { hashCode, type CodeBinding } from '../../../lib/account-security/codes/codes.js'
import { expectAppError, strongPassword } from '../../support/auth-fixtures.js'
import { createTenant, insertUser, owner } from '../../support/fixtures.js'
import { useTestApp } from '../../support/helper.js'

const app = useTestApp()

const TOTP_CODE = '246810'

/**
 * The second factor as a later release will answer for a user with TOTP enabled: a test double at the seam recovery
 * calls (lib/account-security/recovery/reset-factors.ts), over the real database and the real reset.
 */
const totpEnabled: SecondFactorCheck = {
  requiredFor: async () => ['TOTP', 'RECOVERY_CODE'],
  verify: async (_trx, _userId, proof: SecondFactorProof) => proof.method === 'TOTP' && proof.code === TOTP_CODE,
}

const deps = (secondFactor: SecondFactorCheck): RecoveryDeps => ({
  db: app.current.db,
  env: app.current.env,
  issuing: app.current.oneTimeCodes,
  secondFactor,
})

/** A user with a verified phone and a live reset code `042917`, stored as issuing stores it. */
async function userWithResetCode() {
  const tenant = await createTenant()
  const user = await insertUser(tenant)
  const phone = `0105555${String(user.id % 10_000).padStart(4, '0')}`
  await owner().updateTable('users').set({ phone }).where('id', '=', user.id).execute()
  await owner().updateTable('users').set({ phoneVerifiedAt: new Date() }).where('id', '=', user.id).execute()
  const binding: CodeBinding = { tenantId: tenant.id, userId: user.id, purpose: 'PASSWORD_RESET', phone }
  const { key, ttlSeconds, resendSeconds } = app.current.oneTimeCodes.codes
  await withTenant(app.current.db, tenant.id, (trx) =>
    replaceCode(trx, { ...binding, codeHash: hashCode(key, binding, '042917'), ttlSeconds, resendSeconds }),
  )
  const input = { userLoginId: user.userLoginId, customId: tenant.customId, code: '042917' }
  const stored = () => owner().selectFrom('oneTimeCodes').select('attempts').where('userId', '=', user.id).executeTakeFirst()
  const hash = async () => (await owner().selectFrom('users').select('passwordHash').where('id', '=', user.id).executeTakeFirstOrThrow()).passwordHash
  return { user, input, stored, hash }
}

describe('password reset of a user with a second factor', () => {
  it('answers MFA_REQUIRED without secondFactor or with a wrong one, keeping the SMS code live with each try counted', async () => {
    const { input, stored, hash } = await userWithResetCode()
    const before = await hash()
    await expectAppError(resetPasswordWithCode(deps(totpEnabled), { ...input, newPassword: strongPassword() }, NO_ORIGIN), 'MFA_REQUIRED')
    expect(await stored()).toEqual({ attempts: 1 })
    const wrongTotp = { method: 'TOTP', code: '135791' } as const
    await expectAppError(resetPasswordWithCode(deps(totpEnabled), { ...input, newPassword: strongPassword(), secondFactor: wrongTotp }, NO_ORIGIN), 'MFA_REQUIRED')
    expect(await stored()).toEqual({ attempts: 2 })
    expect(await hash()).toBe(before)

    const newPassword = strongPassword()
    await resetPasswordWithCode(deps(totpEnabled), { ...input, newPassword, secondFactor: { method: 'TOTP', code: TOTP_CODE } }, NO_ORIGIN)
    expect(await stored()).toBeUndefined()
    expect(await verifyPassword(newPassword, await hash())).toBe(true)
  })

  it('checks the SMS code first: a wrong one is OTP_INVALID even with the right second factor', async () => {
    const { input, stored } = await userWithResetCode()
    const proof = { method: 'TOTP', code: TOTP_CODE } as const
    await expectAppError(resetPasswordWithCode(deps(totpEnabled), { ...input, code: '000000', newPassword: strongPassword(), secondFactor: proof }, NO_ORIGIN), 'OTP_INVALID')
    expect(await stored()).toEqual({ attempts: 1 })
  })

  it('kills the SMS code after SVC_OTP_MAX_ATTEMPTS tries without the second factor', async () => {
    const { input, stored } = await userWithResetCode()
    for (let attempt = 0; attempt < app.current.env.SVC_OTP_MAX_ATTEMPTS; attempt++) {
      await expectAppError(resetPasswordWithCode(deps(totpEnabled), { ...input, newPassword: strongPassword() }, NO_ORIGIN), 'MFA_REQUIRED')
    }
    const proof = { method: 'TOTP', code: TOTP_CODE } as const
    await expectAppError(resetPasswordWithCode(deps(totpEnabled), { ...input, newPassword: strongPassword(), secondFactor: proof }, NO_ORIGIN), 'OTP_INVALID')
    expect(await stored()).toEqual({ attempts: app.current.env.SVC_OTP_MAX_ATTEMPTS })
  })

  it('asks nothing more of a user without TOTP', async () => {
    const { user, input, stored } = await userWithResetCode()
    const owner = { tenantId: user.tenantId, userId: user.id }
    const check = app.current.secondFactors
    expect(await withTenant(app.current.db, user.tenantId, (trx) => check.requiredFor(trx, owner))).toEqual([])
    await resetPasswordWithCode(deps(check), { ...input, newPassword: strongPassword() }, NO_ORIGIN)
    expect(await stored()).toBeUndefined()
  })
})
