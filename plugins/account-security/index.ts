import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import oneTimeCodes from './one-time-codes.js'
import passwordRecovery from './password-recovery.js'
import secondFactor from './second-factor.js'

/**
 * Account security: one-time codes over the service's own SMS, the second factor (TOTP, SMS, recovery codes),
 * password recovery and phone verification; the proofs its routes ask before their transaction opens are
 * declared in the route files (lib/http/route-proof.ts). Routes:
 * routes/v1/login-mfa.ts, routes/v1/me/mfa.ts, routes/v1/me/phone-verification.ts, routes/v1/password.ts. Logic:
 * lib/account-security/ (codes/, second-factor/, recovery/, phone/, password/). Repositories:
 * db/repos/account-security/.
 */
export default fp<AppOptions>(
  async (app, options) => {
    await app.register(oneTimeCodes, options)
    await app.register(secondFactor, options)
    await app.register(passwordRecovery, options)
  },
  { name: 'account-security', dependencies: ['env', 'db', 'data-keys', 'tenant-tx', 'sign-in', 'dispatch'] },
)
