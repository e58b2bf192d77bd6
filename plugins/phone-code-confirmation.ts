import fp from 'fastify-plugin'
import { auditOriginOf } from '../lib/audit/origin.js'
import { confirmPhoneVerification, type PhoneProof } from '../lib/auth/phone-verification.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route confirms the caller's phone with a code and the password (body `{code, password}`), before its request transaction opens. */
    phoneCodeConfirmation?: true
  }
}

/**
 * The code and password check of POST /v1/me/phone/verification/confirm as an extension of the request transaction
 * (plugins/tenant-tx.ts): a refused code answers 400, which rolls the request transaction back, yet its wrong try must
 * count. So the check runs before that transaction opens, in one of its own that commits either way
 * (lib/auth/phone-verification.ts); the handler then only reads the verified user.
 */
export default fp(
  async (app) => {
    app.requestTransaction.extend({
      name: 'phone-code-confirmation',
      appliesTo: (config) => config.phoneCodeConfirmation === true,
      // After validation: the body is `{code, password}`.
      async beforeOpen(request) {
        const { tenantId, userId } = request.caller
        const { code, password } = request.body as PhoneProof
        const scope = { tenantId, userId, accessJti: request.accessJti }
        await confirmPhoneVerification(app, app.oneTimeCodes.codes, scope, { code, password }, auditOriginOf(request, userId))
        return 'continue'
      },
    })
  },
  { name: 'phone-code-confirmation', dependencies: ['env', 'db', 'auth', 'tenant-tx', 'one-time-codes'] },
)
