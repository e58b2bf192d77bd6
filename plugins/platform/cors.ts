import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { corsOriginList } from '../../lib/env.js'
import { isCorsPath } from '../../lib/http/cors-scope.js'
import { REQUEST_ID_HEADER } from '../../lib/http/request-id.js'
import { REPLAYED_HEADER } from './idempotency.js'

/** What a browser page may send: the API's methods and every request header a route reads. */
const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Device-Category', 'X-Request-Id']
/** Response headers a page may read beyond the CORS-safelisted ones (Content-Type is always readable). */
const EXPOSED_HEADERS = [REQUEST_ID_HEADER, 'Retry-After', REPLAYED_HEADER]
/** Seconds a browser may reuse a preflight answer (Chromium caps it at 7200). */
const PREFLIGHT_MAX_AGE_SECONDS = 600

const GRANTED: FastifyCorsOptions = {
  // `true` echoes the request's Origin; only requests from a listed origin are ever granted (below).
  origin: true,
  credentials: true,
  methods: ALLOWED_METHODS,
  allowedHeaders: ALLOWED_HEADERS,
  exposedHeaders: EXPOSED_HEADERS,
  maxAge: PREFLIGHT_MAX_AGE_SECONDS,
}
// `origin: false` makes @fastify/cors write no Access-Control-* header and leave the request alone.
const REFUSED: FastifyCorsOptions = { origin: false }

/**
 * CORS (docs/api.md#cors) with @fastify/cors: a request from an origin listed in SVC_CORS_ORIGINS to a /v1 path gets
 * credentialed CORS (the exact origin echoed, `Access-Control-Allow-Credentials: true`, `Vary: Origin`), and its
 * preflight answers 204. Any other request gets no CORS header at all, and any OPTIONS that is not such a preflight
 * keeps the answer it has without CORS: 404 problem+json. With an empty list nothing is registered.
 *
 * The decision is made per request (a delegator), not with @fastify/cors's `origin` list: given a list, the library
 * still answers every preflight 204 and sends `Access-Control-Allow-Credentials` to unlisted origins too.
 *
 * The hooks must run before any hook that can refuse a request (closing, auth), so that a listed page can read the
 * refusal (a 401 after logout, a 503 while closing) instead of seeing a network error: the auth plugin lists this
 * one among its dependencies for that reason. Cookie-authenticated changes from unlisted origins are refused by the
 * csrf plugin; CORS only decides what a page may read.
 */
export default fp(
  async (app) => {
    const listed = corsOriginList(app.env.SVC_CORS_ORIGINS)
    // loadEnv has refused a bad list; an Env built by hand must not fall back to allowing everything.
    if (!('origins' in listed)) throw new Error(listed.problem)
    if (listed.origins.length === 0) return
    const allowed = new Set(listed.origins)

    // Exact comparison: browsers send Origin serialised, and SVC_CORS_ORIGINS holds exactly that form.
    const granted = (request: FastifyRequest): boolean => {
      const origin = request.headers.origin
      if (origin === undefined || !allowed.has(origin) || !isCorsPath(request.url)) return false
      // An OPTIONS without Access-Control-Request-Method is not a preflight; it stays an unknown route.
      return request.method !== 'OPTIONS' || request.headers['access-control-request-method'] !== undefined
    }

    // @fastify/cors adds its catch-all OPTIONS route while it registers and takes no route options: the route is
    // public (a preflight carries no credentials), given here while that registration runs and at no other time.
    let registering = true
    app.addHook('onRoute', (route) => {
      if (registering) route.config = { ...route.config, access: 'public' }
    })
    await app.register(cors, {
      delegator: (request, callback) => callback(null, granted(request) ? GRANTED : REFUSED),
    })
    registering = false

    // @fastify/cors routes every OPTIONS to its catch-all route. One it has not answered as a preflight reaches this
    // hook and gets the answer it would get without CORS, before any later hook (auth) refuses it for another reason.
    // A callback, not an async function: it runs on every request (docs/architecture.md#what-every-request-pays). Answered: no `done`.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.method !== 'OPTIONS') return done()
      reply.callNotFound()
    })
  },
  // problem first: its not-found handler is the one callNotFound runs.
  { name: 'cors', dependencies: ['env', 'access', 'problem'] },
)
