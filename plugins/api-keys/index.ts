import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import { ApiKeyBudget } from '../../lib/api-keys/key-budget.js'
import { parseApiKey } from '../../lib/api-keys/key.js'
import { ApiKeyResolver, type ApiKeyCaller } from '../../lib/api-keys/key-resolver.js'
import { LastUsedMarks } from '../../lib/api-keys/last-used.js'
import { AppError } from '../../lib/errors.js'
import type { AccessPolicy } from '../../lib/http/access.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Integrator API keys: how a presented key becomes a caller (plugins/sign-in/auth.ts asks), and their upkeep. */
    apiKeys: ApiKeys
  }
}

export interface ApiKeys {
  /**
   * The caller a bearer credential that looks like a key acts as, on a route of this policy. Refuses, in this order:
   * a route that names no scope or another scope (403 API_KEY_SCOPE, before the key is even looked up), a key that is
   * malformed, unknown, wrong or expired (401 AUTH_003), a key over its budget (429 RATE_LIMITED). Whether it is
   * revoked, and its creator and tenant, the request transaction checks (svc_api_key_scope).
   */
  authenticate(request: FastifyRequest, credential: string, policy: AccessPolicy): Promise<ApiKeyCaller>
  /** A key was created on this instance (forget that its lookup id was ever unknown here). */
  created(lookupId: string): void
}

/**
 * Integrator API keys: a tenant's own servers call the service with `Authorization: Bearer svck_...`, as the OWNER
 * or MANAGER who created the key, within its scopes (each route's `access` names the scope that admits keys,
 * lib/http/access.ts). Routes: routes/v1/api-keys.ts. Logic: lib/api-keys/. Repositories: db/repos/api-keys/.
 * The key's checks on every request: db/functions/svc_api_key_scope.sql; its tenant before any tenant context:
 * db/functions/svc_api_key_directory.sql.
 */
export default fp<AppOptions>(
  async (app) => {
    const resolver = new ApiKeyResolver(app.db, 10_000)
    const budget = new ApiKeyBudget(app.db, app.env.SVC_API_KEY_PER_MINUTE)
    const marks = new LastUsedMarks(app.db)

    app.decorate('apiKeys', {
      async authenticate(request, credential, policy) {
        if (!policy.apiKeyScope) throw new AppError('API_KEY_SCOPE', 'No API key may call this route.')
        const presented = parseApiKey(credential)
        const now = app.clock().getTime()
        const caller = presented ? await resolver.resolve(presented, now) : null
        if (!caller) throw new AppError('AUTH_003', 'The API key is unknown, revoked or expired.')
        if (!caller.scopes.includes(policy.apiKeyScope)) {
          throw new AppError('API_KEY_SCOPE', `This route needs an API key with the scope ${policy.apiKeyScope}.`)
        }
        // The budget's windows are the database's minutes, whatever the app's clock says.
        await budget.spend(caller.tenantId, caller.apiKeyId, Date.now())
        return caller
      },
      created: (lookupId) => resolver.forget(lookupId),
    } satisfies ApiKeys)

    // lastUsedAt: after the answer, for a request the key was admitted to (not refused by the database or a budget).
    // A callback, not an async function: it runs on every request (docs/architecture.md#what-every-request-pays).
    app.addHook('onResponse', (request, reply, done) => {
      const apiKeyId = request.identity?.apiKeyId
      if (apiKeyId != null && reply.statusCode !== 401 && reply.statusCode !== 403 && reply.statusCode !== 429) {
        const write = marks.mark(request.identity!.tenantId, apiKeyId, app.clock())
        if (write) void write().catch((error: unknown) => request.log.warn({ err: error }, 'could not record the API key use'))
      }
      done()
    })
  },
  { name: 'api-keys', dependencies: ['env', 'db', 'clock'] },
)
