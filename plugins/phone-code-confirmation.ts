import fp from 'fastify-plugin'
import { auditOriginOf } from '../lib/audit/origin.js'
import { confirmPhoneVerification } from '../lib/auth/phone-verification.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route confirms the caller's phone with a code (body `{code}`), before its request transaction opens. */
    phoneCodeConfirmation?: true
  }
}

/**
 * The code check of POST /v1/me/phone/verification/confirm as an extension of the request transaction
 * (plugins/tenant-tx.ts): a refused code answers 400, which rolls the request transaction back, yet its wrong try must
 * count. So the check runs before that transaction opens, in one of its own that commits either way
 * (lib/auth/phone-verification.ts); the handler then only reads the verified user.
 */
export default fp(
  async (app) => {
    app.requestTransaction.extend({
      name: 'phone-code-confirmation',
      appliesTo: (config) => config.phoneCodeConfirmation === true,
      // After validation: the body is `{code}`.
      async beforeOpen(request) {
        const { tenantId, userId } = request.caller
        const { code } = request.body as { code: string }
        const scope = { tenantId, userId, accessJti: request.accessJti }
        await confirmPhoneVerification(app.db, app.oneTimeCodes.codes, scope, code, auditOriginOf(request, userId))
        return 'continue'
      },
    })
  },
  { name: 'phone-code-confirmation', dependencies: ['db', 'auth', 'tenant-tx', 'one-time-codes'] },
)
