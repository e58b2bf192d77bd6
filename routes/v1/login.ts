import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { clientInfo } from '../../lib/auth/client-info.js'
import { setAuthCookies } from '../../lib/auth/cookies.js'
import { login } from '../../lib/auth/login.js'
import { failedLoginOutcome } from '../../lib/observability/metrics.js'
import { ClientHeadersSchema, LoginResponseSchema, LoginSchema } from './auth.schemas.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/login',
    {
      config: { access: { audience: 'public', addressBudget: 'AUTH_018' } },
      schema: {
        operationId: 'login',
        summary: 'Sign in: into one academy with customId, or as an owner without it',
        tags: ['auth'],
        headers: ClientHeadersSchema,
        body: LoginSchema,
        response: { 200: LoginResponseSchema },
        problems: ['AUTH_001', 'AUTH_010', 'AUTH_015', 'AUTH_018'],
        setsCookies: 'tokens',
      },
    },
    async (request, reply) => {
      let session: Awaited<ReturnType<typeof login>>
      try {
        session = await login(app.authDeps, request.body, clientInfo(request))
      } catch (error) {
        const outcome = failedLoginOutcome(error)
        app.metrics.login(outcome)
        if (outcome === 'locked') app.metrics.lockout()
        throw error
      }
      app.metrics.login('ok')
      const { tokens, user } = session
      setAuthCookies(reply, app.env, tokens)
      return { accessExpiresIn: app.env.SVC_ACCESS_TTL, refreshExpiresIn: app.env.SVC_REFRESH_TTL, user }
    },
  )
}

export default routes
