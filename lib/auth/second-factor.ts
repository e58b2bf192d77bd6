import type { TenantTx } from '../../db/tenant-transaction.js'

/** The second factors a password reset may be asked for (an SMS code cannot be one: the reset already is one). */
export type SecondFactorMethod = 'TOTP' | 'RECOVERY_CODE'

export interface SecondFactorProof {
  method: SecondFactorMethod
  code: string
}

/** Which proofs a user's reset must add to the SMS code; empty while the user has no second factor. */
export type SecondFactorRequirement = readonly SecondFactorMethod[]

/**
 * The seam between password recovery and the second factor. Recovery asks `requiredFor` inside its transaction and,
 * when something is required, has `verify` judge the proof the request carried; a refusal keeps the SMS code live,
 * one wrong try counted (lib/auth/password-recovery.ts). Both run in the reset's transaction, so a proof that can be
 * used once (a recovery code, a TOTP step) is used up only when the reset commits.
 */
export interface SecondFactorCheck {
  requiredFor(trx: TenantTx, userId: number): Promise<SecondFactorRequirement>
  /** Whether `proof` proves the user; consumes a single-use proof. Called only for a method `requiredFor` named. */
  verify(trx: TenantTx, userId: number, proof: SecondFactorProof): Promise<boolean>
}

/** No user has a second factor yet: nothing is required, and so nothing is ever verified. */
export async function secondFactorRequiredFor(_trx: TenantTx, _userId: number): Promise<SecondFactorRequirement> {
  return []
}

export async function verifySecondFactor(_trx: TenantTx, _userId: number, _proof: SecondFactorProof): Promise<boolean> {
  return false
}

/** The service's second factors, as recovery uses them. */
export const secondFactors: SecondFactorCheck = { requiredFor: secondFactorRequiredFor, verify: verifySecondFactor }
