import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ACCESS_COOKIE } from '../../lib/sign-in/cookies.js'
import type { AuthDeps } from '../../lib/sign-in/deps.js'
import { looksLikeApiKey } from '../../lib/api-keys/key.js'
import { bearerToken } from '../../lib/sign-in/bearer-token.js'
import { identityFromApiKey, identityFromClaims, type Identity } from '../../lib/sign-in/identity.js'
import type { TokenKeys } from '../../lib/sign-in/token-keys.js'
import { tokenKeysFromEnv } from '../../lib/sign-in/token-keys-from-env.js'
import { verifyToken } from '../../lib/sign-in/tokens.js'
import { AppError } from '../../lib/errors.js'
import { policyOf, type AccessPolicy } from '../../lib/http/access.js'
import { continueAfter } from '../../lib/http/route-hooks.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller, or null on public routes. */
    identity: Identity | null
    /**
     * The verified caller, for handlers of routes that authenticate. Throws INTERNAL_ERROR on a route that reads no
     * token: a handler that expects a caller there is a bug, never the client's fault.
     */
    readonly caller: Identity
    /** How the caller proved who it is, for the metrics (never which key or user); null when nothing was read. */
    credentialKind: 'cookie' | 'bearer_token' | 'api_key' | null
  }
  interface FastifyInstance {
    /** Database, token keys and settings for the authentication flows (lib/sign-in). */
    authDeps: AuthDeps
    /** The key set that signs and verifies tokens (SVC_JWT_KEYS, SVC_JWT_SECRET); its public half is the JWKS. */
    tokenKeys: TokenKeys
  }
}

/** `Authorization: Bearer <token>` wins; the access cookie is the fallback. */
function presentedToken(request: FastifyRequest): { token: string; kind: 'cookie' | 'bearer_token' } | undefined {
  const bearer = bearerToken(request)
  if (bearer) return { token: bearer, kind: 'bearer_token' }
  const cookie = request.cookies[ACCESS_COOKIE]
  return cookie ? { token: cookie, kind: 'cookie' } : undefined
}

export default fp(
  async (app) => {
    app.decorate('tokenKeys', tokenKeysFromEnv(app.env, (path) =>
      app.log.warn({ path }, 'SVC_JWT_SECRET is not set: using a generated development secret'),
    ))
    app.decorate('authDeps', { db: app.db, tokenKeys: app.tokenKeys, env: app.env })
    app.decorateRequest('identity', null)
    app.decorateRequest('credentialKind', null)
    app.decorateRequest('caller', {
      getter(this: FastifyRequest) {
        if (!this.identity) throw new AppError('INTERNAL_ERROR', 'no verified caller for this request')
        return this.identity
      },
    })
    // Only routes whose access is read from an access token (lib/http/access.ts); a request that matched no route
    // has no access and reads nothing.
    const authenticate = async (request: FastifyRequest, policy: AccessPolicy) => {
      const presented = presentedToken(request)
      if (!presented) throw new AppError('AUTH_002')
      // An integrator's key (only ever a bearer credential: a key in the cookie is just a bad access token). It acts as
      // its creator, whose role every route that admits keys admits (lib/http/access.ts); no access token, no jti.
      if (presented.kind === 'bearer_token' && looksLikeApiKey(presented.token)) {
        request.credentialKind = 'api_key'
        const caller = await app.apiKeys.authenticate(request, presented.token, policy)
        request.identity = identityFromApiKey(caller)
        request.tenantId = caller.tenantId
        return
      }
      request.credentialKind = presented.kind
      const identity = identityFromClaims(await verifyToken(app.tokenKeys, presented.token, 'access'))
      request.identity = identity
      request.tenantId = identity.tenantId
      request.accessJti = identity.jti
      if (policy.roles && !policy.roles.includes(identity.role)) throw new AppError('AUTH_008')
    }
    // A callback that answers at once on a route that reads no token (docs/architecture.md#what-every-request-pays).
    app.addHook('onRequest', (request, _reply, done) => {
      const policy = policyOf(request.routeOptions.config)
      if (policy.credential !== 'access-token') return done()
      continueAfter(authenticate(request, policy), done)
    })
  },
  // cors before everything that can refuse a request, so that a listed origin can read the refusal (plugins/platform/cors.ts).
  { name: 'auth', dependencies: ['env', 'access', 'cors', 'db', 'cookie', 'tenant-tx', 'closing', 'api-keys'] },
)
