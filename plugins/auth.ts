import jwt from '@fastify/jwt'
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import type { Role } from '../db/schema.js'
import { ACCESS_COOKIE } from '../lib/auth/cookies.js'
import type { AuthDeps } from '../lib/auth/deps.js'
import { identityFromClaims, type Identity } from '../lib/auth/identity.js'
import { resolveJwtSecret } from '../lib/auth/jwt-secret.js'
import { isAuthSkipped } from '../lib/auth/skip-paths.js'
import { verifyToken } from '../lib/auth/tokens.js'
import { AppError } from '../lib/errors.js'

// routes/v1/sms-templates/index.ts imports the type from here; that import moves to lib/auth/identity.ts after the
// route-schema work in routes/ has merged, so the two changes never touch the same lines.
export type { Identity }

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` for public routes (no token read at all). */
    auth?: boolean
    /** Roles allowed on this route, checked from the token. */
    roles?: readonly Role[]
  }
  interface FastifyRequest {
    /** The verified caller, or null on public routes. */
    identity: Identity | null
    /**
     * The verified caller, for handlers of routes that authenticate. Throws INTERNAL_ERROR on a route that reads no
     * token: a handler that expects a caller there is a bug, never the client's fault.
     */
    readonly caller: Identity
  }
  interface FastifyInstance {
    /** Database, token signer and settings for the authentication flows (lib/auth). */
    authDeps: AuthDeps
    /** An onRequest hook refusing callers whose role is not listed (AUTH_008); used by subtree autohooks. */
    requireRoles(roles: readonly Role[]): onRequestHookHandler
  }
}

export const STAFF_ROLES: readonly Role[] = ['OWNER', 'MANAGER', 'INSTRUCTOR']

/** The access token of `Authorization: Bearer <token>`, when that header carries one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (!header) return undefined
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] || undefined
}

/** `Authorization: Bearer <token>` wins; the access cookie is the fallback. */
function presentedToken(request: FastifyRequest): string | undefined {
  return bearerToken(request) ?? (request.cookies[ACCESS_COOKIE] || undefined)
}

function assertRole(request: FastifyRequest, roles: readonly Role[]): void {
  const identity = request.identity
  if (!identity) throw new AppError('AUTH_002')
  if (!roles.includes(identity.role)) throw new AppError('AUTH_008')
}

export default fp(
  async (app) => {
    const secret = resolveJwtSecret(app.env, (path) =>
      app.log.warn({ path }, 'SVC_JWT_SECRET is not set: using a generated development secret'),
    )
    await app.register(jwt, {
      secret,
      sign: { algorithm: 'HS256', iss: app.env.SVC_JWT_ISSUER },
      // allowedIss alone lets a token without `iss` through; requiring the claim makes a missing issuer a wrong one.
      verify: { algorithms: ['HS256'], allowedIss: app.env.SVC_JWT_ISSUER, requiredClaims: ['iss', 'iat', 'exp'] },
    })

    app.decorate('authDeps', { db: app.db, jwt: app.jwt, env: app.env })
    app.decorateRequest('identity', null)
    app.decorateRequest('caller', {
      getter(this: FastifyRequest) {
        if (!this.identity) throw new AppError('INTERNAL_ERROR', 'no verified caller for this request')
        return this.identity
      },
    })
    app.decorate('requireRoles', (roles: readonly Role[]): onRequestHookHandler => {
      // Public routes inside a guarded subtree (the provider webhook under /v1/sms) authenticate otherwise.
      return async (request) => {
        if (request.routeOptions.config.auth === false) return
        assertRole(request, roles)
      }
    })

    app.addHook('onRequest', async (request) => {
      if (request.is404 || isAuthSkipped(request.url) || request.routeOptions.config.auth === false) return
      const token = presentedToken(request)
      if (!token) throw new AppError('AUTH_002')
      const identity = identityFromClaims(verifyToken(app.jwt, token, 'access'))
      request.identity = identity
      request.tenantId = identity.tenantId
      request.accessJti = identity.jti
      const roles = request.routeOptions.config.roles
      if (roles) assertRole(request, roles)
    })
  },
  // cors before everything that can refuse a request, so that a listed origin can read the refusal (plugins/cors.ts).
  { name: 'auth', dependencies: ['env', 'cors', 'db', 'cookie', 'tenant-tx', 'closing'] },
)
