import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { bearerToken } from '../../lib/sign-in/bearer-token.js'
import { ACCESS_COOKIE, REFRESH_COOKIE } from '../../lib/sign-in/cookies.js'
import { corsOriginList } from '../../lib/env.js'
import { AppError } from '../../lib/errors.js'
import { policyOf } from '../../lib/http/access.js'
import { MFA_COOKIE } from '../../lib/account-security/second-factor/mfa-token.js'

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** `scheme://host[:port]` as browsers serialise it (default port dropped, host lowercased), or null. */
function serialisedOrigin(text: string): string | null {
  try {
    const url = new URL(text)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : null
  } catch {
    return null
  }
}

/**
 * The cookie a browser attaches on its own is what a cross-site page can ride on; a bearer token it cannot add
 * without a CORS preflight, which only listed origins pass. So only requests that authenticate by cookie are checked.
 */
function authenticatedByCookie(request: FastifyRequest): boolean {
  switch (policyOf(request.routeOptions.config).csrfCookie) {
    case 'refresh':
      return Boolean(request.cookies[REFRESH_COOKIE])
    case 'mfa':
      return Boolean(request.cookies[MFA_COOKIE])
    case 'access':
      return bearerToken(request) === undefined && Boolean(request.cookies[ACCESS_COOKIE])
    case null:
      return false
  }
}

/**
 * CSRF (docs/api.md#csrf): an unsafe request authenticated by cookie whose `Origin` (or, without one,
 * `Sec-Fetch-Site: cross-site`) is neither the service's own origin nor listed in SVC_CORS_ORIGINS answers 403
 * CSRF_ORIGIN_REJECTED before anything runs. Requests with neither header (curl, mobile apps) pass: browsers send
 * `Origin` on every cross-origin POST, PUT, PATCH and DELETE.
 *
 * The own origin is the request's scheme and Host as Fastify reads them: X-Forwarded-Proto and X-Forwarded-Host
 * count only when the peer is a trusted proxy (SVC_TRUST_PROXY), so an untrusted client cannot declare the origin
 * it comes from to be ours. A browser cannot forge Host and Origin together, so comparing them is sound. Behind a
 * proxy that is not trusted (or that rewrites Host without X-Forwarded-Host), list the public origin in
 * SVC_CORS_ORIGINS.
 */
export default fp(
  async (app) => {
    const listed = corsOriginList(app.env.SVC_CORS_ORIGINS)
    // loadEnv has refused a bad list; an Env built by hand must not fall back to allowing everything.
    if (!('origins' in listed)) throw new Error(listed.problem)
    const allowed = new Set(listed.origins)

    const ownOrigin = (request: FastifyRequest) => serialisedOrigin(`${request.protocol}://${request.host}`)

    /** Why the request is refused as a cross-site one, or null. */
    const refusal = (request: FastifyRequest): AppError | null => {
      if (!UNSAFE_METHODS.has(request.method) || !authenticatedByCookie(request)) return null
      const origin = request.headers.origin
      if (origin !== undefined) {
        const presented = serialisedOrigin(origin)
        if (presented !== null && (allowed.has(presented) || presented === ownOrigin(request))) return null
        return new AppError('CSRF_ORIGIN_REJECTED', `Origin ${JSON.stringify(origin.slice(0, 200))} may not change anything here with a cookie.`)
      }
      if (request.headers['sec-fetch-site'] === 'cross-site') {
        return new AppError('CSRF_ORIGIN_REJECTED', 'A cross-site request may not change anything here with a cookie.')
      }
      return null
    }

    // A callback, not an async function: it runs on every request (docs/architecture.md#what-every-request-pays).
    app.addHook('onRequest', (request, _reply, done) => done(refusal(request) ?? undefined))
  },
  { name: 'csrf', dependencies: ['env', 'access', 'cookie'] },
)
