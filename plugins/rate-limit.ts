import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { hitRateWindow } from '../db/repos/login-guards.js'
import { addressBudget, overBudget } from '../lib/auth/address-budget.js'
import type { ErrorCode } from '../lib/errors.js'
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
        const budget = addressBudget(request.ip, limit)
        const { hits, resetsAt } = await hitRateWindow(app.db, budget.key)
        if (hits > budget.limit) throw overBudget(code, resetsAt)
      })
    })
  },
  { name: 'rate-limit', dependencies: ['env', 'db'] },
)
