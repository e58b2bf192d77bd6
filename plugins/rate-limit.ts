import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { hitRateWindow } from '../db/repos/login-guards.js'
import { AppError, type ErrorCode } from '../lib/errors.js'
import { appendRouteHook } from '../lib/http/route-hooks.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Counts the request against the per-address budget shared by login, registration and refresh
     * (SVC_LOGIN_IP_PER_MINUTE); the value is the error code answered beyond it.
     */
    addressRateLimit?: Extract<ErrorCode, 'AUTH_018' | 'RATE_LIMITED'>
  }
}

export default fp(
  async (app) => {
    const limit = app.env.SVC_LOGIN_IP_PER_MINUTE
    // Attached only to the routes that ask for it; onRequest: refused before the body is even read.
    app.addHook('onRoute', (route) => {
      const code = route.config?.addressRateLimit
      if (!code) return
      appendRouteHook(route, 'onRequest', async (request: FastifyRequest) => {
        const { hits, resetsAt } = await hitRateWindow(app.db, `auth:${request.ip}`)
        if (hits > limit) {
          const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - Date.now()) / 1000))
          throw new AppError(code, 'Too many requests from this address; try again later.', {
            headers: { 'retry-after': String(retryAfter) },
          })
        }
      })
    })
  },
  { name: 'rate-limit', dependencies: ['env', 'db'] },
)
