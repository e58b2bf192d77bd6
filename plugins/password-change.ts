import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { auditOriginOf } from '../lib/audit/origin.js'
import { provePasswordChange, type ProvenPasswordChange } from '../lib/auth/change-password.js'
import { AppError } from '../lib/errors.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route changes the caller's password: its current password is proven before the transaction opens. */
    passwordChange?: true
  }
  interface FastifyRequest {
    /** The proven change the handler stores in the request transaction (lib/auth/change-password.ts). */
    readonly provenPasswordChange: ProvenPasswordChange
  }
}

const kProven = Symbol('provenPasswordChange')
type WithProven = FastifyRequest & { [kProven]: ProvenPasswordChange | null }

/**
 * The password change as an extension of the request transaction (plugins/tenant-tx.ts): bcrypt (the current
 * password's comparison, the new one's hash) runs before the transaction opens, with no pooled connection held, so
 * a burst of password changes cannot starve every other request of connections. The handler only writes.
 */
export default fp(
  async (app) => {
    app.decorateRequest(kProven, null)
    app.decorateRequest('provenPasswordChange', {
      getter(this: FastifyRequest) {
        const proven = (this as WithProven)[kProven]
        if (!proven) throw new AppError('INTERNAL_ERROR', 'no proven password change for this request')
        return proven
      },
    })

    app.requestTransaction.extend({
      name: 'password-change',
      appliesTo: (config) => config.passwordChange === true,
      // After validation: the body is a ChangePasswordSchema.
      async beforeOpen(request) {
        const { tenantId, userId } = request.caller
        const passwords = request.body as { currentPassword: string; newPassword: string }
        const caller = { tenantId, userId, accessJti: request.accessJti }
        const origin = auditOriginOf(request, userId)
        ;(request as WithProven)[kProven] = await provePasswordChange({ db: app.db, env: app.env }, caller, passwords, origin)
        return 'continue'
      },
    })
  },
  { name: 'password-change', dependencies: ['db', 'auth', 'tenant-tx'] },
)
