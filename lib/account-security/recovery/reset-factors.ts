import { findSecondFactors, type FactorOwner } from '../../../db/repos/account-security/second-factors.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import { verifyRecoveryCode, verifyTotp } from '../second-factor/factors.js'
import type { MfaSettings } from '../second-factor/settings.js'

/** The second factors a password reset may be asked for (an SMS code cannot be one: the reset already is one). */
export type SecondFactorMethod = 'TOTP' | 'RECOVERY_CODE'

export interface SecondFactorProof {
  method: SecondFactorMethod
  code: string
}

/** Which proofs a user's reset must add to the SMS code; empty while the user has no TOTP. */
export type SecondFactorRequirement = readonly SecondFactorMethod[]

/**
 * The seam between password recovery and the second factor. Recovery asks `requiredFor` inside its transaction and,
 * when something is required, has `verify` judge the proof the request carried; a refusal keeps the SMS code live,
 * one wrong try counted (lib/account-security/recovery/password-recovery.ts). Both run in the reset's transaction, so a proof that can be
 * used once (a recovery code, a TOTP step) is used up only when the reset commits.
 */
export interface SecondFactorCheck {
  requiredFor(trx: TenantTx, owner: FactorOwner): Promise<SecondFactorRequirement>
  /** Whether `proof` proves the user; consumes a single-use proof. Called only for a method `requiredFor` named. */
  verify(trx: TenantTx, owner: FactorOwner, proof: SecondFactorProof): Promise<boolean>
}

/**
 * The service's second factors as recovery uses them. A user with TOTP must add a TOTP code or a recovery code to the
 * SMS code: a stolen phone alone then resets nothing. A user whose only factor is SMS needs nothing more, since the
 * reset's code already went to that phone.
 */
export function secondFactorCheck(settings: MfaSettings): SecondFactorCheck {
  return {
    async requiredFor(trx, owner) {
      const factors = await findSecondFactors(trx, owner)
      return factors?.totpEnabledAt != null ? ['TOTP', 'RECOVERY_CODE'] : []
    },
    verify(trx, owner, proof) {
      return proof.method === 'TOTP' ? verifyTotp(trx, settings, owner, proof.code) : verifyRecoveryCode(trx, settings, owner, proof.code)
    },
  }
}
