import fp from 'fastify-plugin'
import { auditOriginOf } from '../lib/audit/origin.js'
import { proveCurrentPassword } from '../lib/auth/change-password.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route changes a factor of the caller's sign-in: body `{password}`, proven before the transaction opens. */
    passwordProof?: true
  }
}

/**
 * The current password as an extension of the request transaction (plugins/tenant-tx.ts), for the routes that change
 * a second factor: bcrypt runs before the transaction opens, with no pooled connection held, and the check is a
 * login attempt of the user (lib/auth/change-password.ts): AUTH_013 when wrong, counted towards the lockout, AUTH_018
 * while locked. A stolen session alone can therefore neither enable, disable nor read out a factor.
 */
export default fp(
  async (app) => {
    app.requestTransaction.extend({
      name: 'password-proof',
      appliesTo: (config) => config.passwordProof === true,
      // After validation: the body has `password`.
      async beforeOpen(request) {
        const { tenantId, userId } = request.caller
        const { password } = request.body as { password: string }
        const caller = { tenantId, userId, accessJti: request.accessJti }
        await proveCurrentPassword({ db: app.db, env: app.env }, caller, password, auditOriginOf(request, userId))
        return 'continue'
      },
    })
  },
  { name: 'password-proof', dependencies: ['db', 'auth', 'tenant-tx'] },
)
