import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { clientInfo } from '../../lib/sign-in/client-info.js'
import { setAuthCookies, setMfaCookie } from '../../lib/sign-in/cookies.js'
import { login } from '../../lib/sign-in/login.js'
import { countedLogin } from '../../lib/observability/metrics.js'
import { ClientHeadersSchema, LoginResponseSchema, LoginSchema, MfaRequiredResponseSchema } from './auth.schemas.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/login',
    {
      config: { access: { audience: 'public', addressBudget: 'AUTH_018' } },
      schema: {
        operationId: 'login',
        summary: 'Sign in: into one academy with customId, or as an owner without it',
        description:
          'A user with a second factor gets `mfaRequired` and the svc_mfa_token cookie instead of a session: the ' +
          'session opens at POST /v1/login/mfa.',
        tags: ['auth'],
        headers: ClientHeadersSchema,
        body: LoginSchema,
        response: { 200: Type.Union([LoginResponseSchema, MfaRequiredResponseSchema]) },
        problems: ['AUTH_001', 'AUTH_010', 'AUTH_015', 'AUTH_018'],
        setsCookies: 'tokens-or-mfa',
      },
    },
    async (request, reply) => {
      const outcome = await countedLogin(
        app.metrics,
        () => login(app.authDeps, request.body, clientInfo(request)),
        (done) => ('secondStep' in done ? 'second_step' : 'ok'),
      )
      if ('secondStep' in outcome) {
        const { token, methods, expiresIn } = outcome.secondStep
        setMfaCookie(reply, app.env, token, expiresIn)
        return { mfaRequired: true as const, methods, expiresIn }
      }
      setAuthCookies(reply, app.env, outcome.tokens)
      return { accessExpiresIn: app.env.SVC_ACCESS_TTL, refreshExpiresIn: app.env.SVC_REFRESH_TTL, user: outcome.user }
    },
  )
}

export default routes
