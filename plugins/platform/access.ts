import type { RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { isAuthSkipped } from '../../lib/sign-in/skip-paths.js'
import { resolveAccess, type Access } from '../../lib/http/access.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may call the route (lib/http/access.ts). Required: token extraction, the role check, the tenant
     * transaction, the CSRF rule, the address budget and the documented refusals all follow from it.
     */
    access?: Access
  }
}

const describe = (route: RouteOptions) => `${[route.method].flat().join(',')} ${route.url}`

/**
 * Every route declares its access, or the service does not start. A value that is not an access fails at once; a
 * missing one fails when the app is ready, because a library's routes get theirs from an onRoute hook of the plugin
 * that registers them, which runs after this one (plugins/platform/swagger.ts, plugins/platform/cors.ts).
 *
 * Paths under the skipped prefixes (lib/sign-in/skip-paths.ts) never read an access token: a route there that asks for
 * one is refused here, so the rule holds by construction instead of by a URL check on every request.
 */
export default fp(
  async (app) => {
    const routes: RouteOptions[] = []
    app.addHook('onRoute', (route) => {
      if (route.config?.access !== undefined) resolveAccess(route.config.access)
      routes.push(route)
    })
    app.addHook('onReady', async () => {
      const problems: string[] = []
      for (const route of routes) {
        const access = route.config?.access
        if (access === undefined) {
          problems.push(`${describe(route)}: no access policy (config.access)`)
        } else if (resolveAccess(access).credential === 'access-token' && isAuthSkipped(route.url)) {
          problems.push(`${describe(route)}: reads an access token under a skipped prefix`)
        }
      }
      if (problems.length > 0) throw new Error(`routes without a valid access policy:\n${problems.join('\n')}`)
    })
  },
  // Every plugin that applies a route's policy (auth, csrf, cors, budgets, signatures) depends on this one, so
  // node-refusals' Host check runs before any of them: a request HTTP/1.1 refuses is refused before a policy reads a
  // credential or counts a budget, whatever the route (docs/api.md#conventions).
  { name: 'access', dependencies: ['node-refusals'] },
)
