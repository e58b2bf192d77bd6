import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { hitRateWindow } from '../../db/repos/sign-in/login-guards.js'
import { addressBudget, overBudget } from '../../lib/sign-in/address-budget.js'
import { resolveAccess } from '../../lib/http/access.js'
import { appendRouteHook } from '../../lib/http/route-hooks.js'

export default fp(
  async (app) => {
    const limit = app.env.SVC_LOGIN_IP_PER_MINUTE
    // The per-address budget (SVC_LOGIN_IP_PER_MINUTE) of routes whose access names one, attached to those routes
    // only; onRequest: refused before the body is even read.
    app.addHook('onRoute', (route) => {
      const access = route.config?.access
      const code = access === undefined ? null : resolveAccess(access).addressBudget
      if (!code) return
      appendRouteHook(route, 'onRequest', async (request: FastifyRequest) => {
        const budget = addressBudget(request.ip, limit)
        const { hits, resetsAt } = await hitRateWindow(app.db, budget.key)
        if (hits > budget.limit) throw overBudget(code, resetsAt)
      })
    })
  },
  { name: 'rate-limit', dependencies: ['env', 'access', 'db'] },
)
