import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { clientInfo } from '../../lib/sign-in/client-info.js'
import { clearMfaCookie, setAuthCookies } from '../../lib/sign-in/cookies.js'
import { completeSecondStep, sendSecondStepCode } from '../../lib/sign-in/login-second-step.js'
import { MFA_COOKIE } from '../../lib/account-security/second-factor/mfa-token.js'
import { countedLogin } from '../../lib/observability/metrics.js'
import { ClientHeadersSchema, LoginResponseSchema } from './auth.schemas.js'
import { MfaAnswerSchema, MfaCodeSentSchema } from './login-mfa.schemas.js'
import { NoBodySchema } from './me/phone-verification.schemas.js'

// The second step of a login (lib/sign-in/login-second-step.ts), by the mfa cookie its password step set. Under the
// skipped prefix /v1/login, like login: no access token is read. Both spend login's per-address budget, and a cookie
// sent from another site's page is refused (plugins/platform/csrf.ts).
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/login/mfa/sms',
    {
      config: { access: { audience: 'mfa-cookie', addressBudget: 'AUTH_018' } },
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {}
      },
      schema: {
        operationId: 'sendLoginCode',
        summary: 'Second step of a login: send a code by SMS to the verified phone',
        tags: ['auth'],
        body: NoBodySchema,
        response: { 202: MfaCodeSentSchema },
        problems: ['MFA_NOT_ENABLED', 'PHONE_NOT_VERIFIED', 'INVALID_PHONE_NUMBER', 'OTP_RATE_LIMITED', 'SMS_QUOTA_EXCEEDED', 'SENDER_SETTING_NOT_APPROVED'],
      },
    },
    async (request, reply) => {
      const sent = await sendSecondStepCode(app.secondStepDeps, request.cookies[MFA_COOKIE])
      app.dispatcher.kick()
      return reply.code(202).send(sent)
    },
  )

  app.post(
    '/login/mfa',
    {
      config: { access: { audience: 'mfa-cookie', addressBudget: 'AUTH_018' } },
      schema: {
        operationId: 'completeLogin',
        summary: 'Second step of a login: a TOTP, SMS or recovery code opens the session',
        tags: ['auth'],
        headers: ClientHeadersSchema,
        body: MfaAnswerSchema,
        response: { 200: LoginResponseSchema },
        problems: ['MFA_CODE_INVALID', 'AUTH_010', 'AUTH_015'],
        setsCookies: 'tokens-mfa-cleared',
      },
    },
    async (request, reply) => {
      const session = await countedLogin(app.metrics, () =>
        completeSecondStep(app.secondStepDeps, request.cookies[MFA_COOKIE], request.body, clientInfo(request)),
      )
      clearMfaCookie(reply, app.env)
      setAuthCookies(reply, app.env, session.tokens)
      return { accessExpiresIn: app.env.SVC_ACCESS_TTL, refreshExpiresIn: app.env.SVC_REFRESH_TTL, user: session.user }
    },
  )
}

export default routes
