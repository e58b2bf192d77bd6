import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { addressBudget } from '../../lib/sign-in/address-budget.js'
import { REFRESH_COOKIE, setAuthCookies } from '../../lib/sign-in/cookies.js'
import { refreshSession } from '../../lib/sign-in/refresh.js'
import { RefreshResponseSchema } from './auth.schemas.js'

// Refresh reads only the cookie and ignores any body, even malformed JSON: in this plugin's scope every body
// is drained unparsed (still within the size limit).
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined))

  app.post(
    '/refresh',
    {
      // The address budget is counted inside the rotation statement (lib/sign-in/refresh.ts), not by the rate-limit hook.
      // The refresh cookie authenticates it, so cross-origin calls are refused like cookie-signed ones (plugins/platform/csrf.ts).
      config: { access: 'refresh-cookie' },
      schema: {
        operationId: 'refreshTokens',
        summary: 'Rotate both tokens with the refresh cookie',
        tags: ['auth'],
        response: { 200: RefreshResponseSchema },
        problems: ['AUTH_005', 'AUTH_006', 'AUTH_007', 'AUTH_010', 'AUTH_015', 'AUTH_016', 'AUTH_017', 'RATE_LIMITED'],
        setsCookies: 'tokens',
      },
    },
    async (request, reply) => {
      const budget = addressBudget(request.ip, app.env.SVC_LOGIN_IP_PER_MINUTE)
      const tokens = await refreshSession(app.authDeps, request.cookies[REFRESH_COOKIE], budget).catch((error: unknown) => {
        if ((error as { code?: unknown }).code === 'AUTH_016') app.metrics.refreshReuse()
        throw error
      })
      setAuthCookies(reply, app.env, tokens)
      return { accessExpiresIn: app.env.SVC_ACCESS_TTL, refreshExpiresIn: app.env.SVC_REFRESH_TTL, user: null }
    },
  )
}

export default routes
