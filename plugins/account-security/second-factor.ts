import fp from 'fastify-plugin'
import { secondFactorCheck, type SecondFactorCheck } from '../../lib/account-security/recovery/reset-factors.js'
import type { SecondStepDeps } from '../../lib/sign-in/login-second-step.js'
import { mfaSettings, type MfaSettings } from '../../lib/account-security/second-factor/settings.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The second factor's keys and token lifetime (lib/account-security/second-factor). */
    mfa: MfaSettings
    /** What a password reset asks of a user with a second factor (lib/account-security/recovery/reset-factors.ts). */
    secondFactors: SecondFactorCheck
    /** What a login's second step needs (lib/sign-in/login-second-step.ts). */
    secondStepDeps: SecondStepDeps
  }
}

/** Its keys are derived from the data keys (lib/account-security/second-factor/settings.ts), built once at start like them. */
export default fp(
  async (app) => {
    const settings = mfaSettings(app.env, app.dataKeys)
    app.decorate('mfa', settings)
    app.decorate('secondFactors', secondFactorCheck(settings))
    app.decorate('secondStepDeps', { ...app.authDeps, mfa: settings, issuing: app.oneTimeCodes })
  },
  { name: 'second-factor', dependencies: ['env', 'auth', 'data-keys', 'one-time-codes'] },
)
