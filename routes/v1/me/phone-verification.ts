import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { currentUserResponse } from '../../../lib/auth/current-user.js'
import { requestPhoneVerification } from '../../../lib/auth/phone-verification.js'
import { UserResponseSchema } from '../../../lib/auth/user-response.js'
import { NoBodySchema, PhoneVerificationCodeSchema, PhoneVerificationSentSchema } from './phone-verification.schemas.js'

// Mounted at /v1/me by its folder, like profile.ts.
const routes: FastifyPluginAsyncTypebox = async (app) => {
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
      // The password and the code are checked before the request transaction opens (plugins/phone-code-confirmation.ts);
      // the password is a login attempt, so the address's login budget applies as on every password proof.
      config: { access: { audience: 'user', addressBudget: 'RATE_LIMITED' }, phoneCodeConfirmation: true },
      schema: {
        operationId: 'confirmPhoneVerification',
        summary: 'Prove your phone with the code it received',
        tags: ['me'],
        body: PhoneVerificationCodeSchema,
        response: { 200: UserResponseSchema },
        problems: ['OTP_INVALID', 'AUTH_013', 'AUTH_018'],
      },
    },
    async (request) => currentUserResponse(request.db, request.caller.userId),
  )
}

export default routes
