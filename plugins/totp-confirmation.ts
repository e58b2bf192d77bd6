import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { auditOriginOf } from '../lib/audit/origin.js'
import { AppError } from '../lib/errors.js'
import { confirmTotpEnrolment } from '../lib/mfa/enrolment.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route confirms the caller's pending TOTP enrolment (body `{code}`), before its request transaction opens. */
    totpConfirmation?: true
  }
  interface FastifyRequest {
    /** The recovery codes the confirmation issued, for the handler to answer (shown this once). */
    readonly issuedRecoveryCodes: string[]
  }
}

const kIssued = Symbol('issuedRecoveryCodes')
type WithIssued = FastifyRequest & { [kIssued]: string[] | null }

/**
 * The confirmation of POST /v1/me/mfa/totp/confirm as an extension of the request transaction (plugins/tenant-tx.ts):
 * a wrong code answers 400, which rolls the request transaction back, yet it must count (a pending secret dies after
 * SVC_OTP_MAX_ATTEMPTS wrong codes). So the check runs before that transaction opens, in one of its own that commits
 * either way (lib/mfa/enrolment.ts); the handler answers the codes it issued.
 */
export default fp(
  async (app) => {
    app.decorateRequest(kIssued, null)
    app.decorateRequest('issuedRecoveryCodes', {
      getter(this: FastifyRequest) {
        const issued = (this as WithIssued)[kIssued]
        if (!issued) throw new AppError('INTERNAL_ERROR', 'no TOTP confirmation for this request')
        return issued
      },
    })

    app.requestTransaction.extend({
      name: 'totp-confirmation',
      appliesTo: (config) => config.totpConfirmation === true,
      // After validation: the body is `{code}`.
      async beforeOpen(request) {
        const { tenantId, userId } = request.caller
        const { code } = request.body as { code: string }
        const scope = { tenantId, userId, accessJti: request.accessJti }
        const origin = auditOriginOf(request, userId)
        ;(request as WithIssued)[kIssued] = await confirmTotpEnrolment(app.db, app.mfa, app.env.SVC_OTP_MAX_ATTEMPTS, scope, code, origin)
        return 'continue'
      },
    })
  },
  { name: 'totp-confirmation', dependencies: ['db', 'auth', 'tenant-tx', 'second-factor'] },
)
