import jwt from '@fastify/jwt'
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import type { Role } from '../db/schema.js'
import { ACCESS_COOKIE } from '../lib/auth/cookies.js'
import type { AuthDeps } from '../lib/auth/deps.js'
import { resolveJwtSecret } from '../lib/auth/jwt-secret.js'
import { isAuthSkipped } from '../lib/auth/skip-paths.js'
import { verifyToken } from '../lib/auth/tokens.js'
import { AppError } from '../lib/errors.js'

export interface Identity {
  userId: number
  tenantSlug: string
  tenantId: number
  role: Role
  /** Spring-style authority kept for modules that check `ROLE_<role>`. */
  authority: `ROLE_${Role}`
  sid: string
  jti: string
  accessExpiresAt: Date
}

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
      const claims = verifyToken(app.jwt, token, 'access')
      request.identity = {
        userId: Number(claims.sub),
        tenantSlug: claims.tenant_slug,
        tenantId: claims.tenant_id,
        role: claims.role,
        authority: `ROLE_${claims.role}`,
        sid: claims.sid,
        jti: claims.jti,
        accessExpiresAt: new Date(claims.exp * 1000),
      }
      request.tenantId = claims.tenant_id
      request.accessJti = claims.jti
      const roles = request.routeOptions.config.roles
      if (roles) assertRole(request, roles)
    })
  },
  // cors before everything that can refuse a request, so that a listed origin can read the refusal (plugins/cors.ts).
  { name: 'auth', dependencies: ['env', 'cors', 'db', 'cookie', 'tenant-tx', 'closing'] },
)
