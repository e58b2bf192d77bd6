import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findCurrentUser, toFullUserResponse } from '../../../lib/sign-in/current-user.js'
import { auditOriginOf } from '../../../lib/audit/origin.js'
import { routeProof } from '../../../lib/http/route-proof.js'
import { confirmPhoneVerification, requestPhoneVerification, type PhoneProof } from '../../../lib/account-security/phone/phone-verification.js'
import { callerScope } from '../../../lib/sign-in/caller-scope.js'
import { UserResponseSchema } from '../../../lib/sign-in/user-response.js'
import { NoBodySchema, PhoneVerificationCodeSchema, PhoneVerificationSentSchema } from './phone-verification.schemas.js'

// Mounted at /v1/me by its folder, like profile.ts.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  // A refused code answers 400, which rolls the request transaction back, yet its wrong try must count: the password
  // and the code are checked before that transaction opens, in one of their own that commits either way; the handler
  // then only reads the verified user.
  const phoneCode = routeProof<PhoneProof>('phone-code', (request) =>
    confirmPhoneVerification(app, app.oneTimeCodes.codes, callerScope(request), request.body, auditOriginOf(request, request.caller.userId)),
  )

  app.post(
    '/phone/verification',
    {
      // Codes cost the academy an SMS each: every request spends the address's budget too.
      config: { access: { audience: 'user', addressBudget: 'RATE_LIMITED' } },
      // No body, or `{}`: a missing one reads as `{}`, so that only an unexpected field is refused.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {}
      },
      schema: {
        operationId: 'sendPhoneVerification',
        summary: 'Send a code by SMS to the phone on your profile',
        tags: ['me'],
        body: NoBodySchema,
        response: { 202: PhoneVerificationSentSchema },
        // INVALID_PHONE_NUMBER: a number stored before today's numbering rules that they no longer accept.
        problems: ['PHONE_REQUIRED', 'INVALID_PHONE_NUMBER', 'OTP_RATE_LIMITED', 'SMS_QUOTA_EXCEEDED', 'SENDER_SETTING_NOT_APPROVED'],
      },
    },
    async (request, reply) => {
      const sent = await requestPhoneVerification(request.db, app.oneTimeCodes, request.caller)
      request.afterCommit(() => app.dispatcher.kick())
      return reply.code(202).send(sent)
    },
  )

  app.post(
    '/phone/verification/confirm',
    {
      // The password is a login attempt, so the address's login budget applies as on every password proof.
      config: { access: { audience: 'user', addressBudget: 'RATE_LIMITED' }, proof: phoneCode },
      schema: {
        operationId: 'confirmPhoneVerification',
        summary: 'Prove your phone with the code it received',
        tags: ['me'],
        body: PhoneVerificationCodeSchema,
        response: { 200: UserResponseSchema },
        problems: ['OTP_INVALID', 'AUTH_013', 'AUTH_018'],
      },
    },
    // Not currentUserResponse: its read ends a read-only transaction, and a POST's may write (refused in
    // db/driver/lent-connection.ts).
    async (request) => toFullUserResponse(request.db, await findCurrentUser(request.db, request.caller.userId)),
  )
}

export default routes
