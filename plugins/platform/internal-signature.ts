import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { FastifyBodyParser, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { findTenantBySlug } from '../../db/repos/tenancy/tenants.js'
import { claimSignature } from '../../db/repos/used-internal-signatures.js'
import { AppError } from '../../lib/errors.js'
import { policyOf } from '../../lib/http/access.js'
import { continueAfter } from '../../lib/http/route-hooks.js'
import { nestsDeeperThan, tooDeep } from '../../lib/http/json-depth.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received, kept by `signedJsonParser` because the signature covers these bytes. */
    rawBody: Buffer | null
    /** Why the JSON body could not be parsed (empty or malformed); answered only after the signature check. */
    bodyParseError: Error | null
  }
  interface FastifyInstance {
    /**
     * JSON parser for signed routes, registered by the subtree that serves them: keeps the raw bytes for the
     * signature and defers any parse error, so a caller without a valid signature learns nothing about how its
     * body was read (401 first, then 400 for bad JSON).
     */
    signedJsonParser: FastifyBodyParser<Buffer>
  }
}

export const SIGNATURE_WINDOW_SECONDS = 300
const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/
const TIMESTAMP_PATTERN = /^\d{1,12}$/

/** The string both sides sign: timestamp, method, request target, tenant slug and the body's SHA-256, one a line. */
export function signingString(parts: { timestamp: string; method: string; path: string; tenantSlug: string; body: Buffer }): string {
  const bodyHash = createHash('sha256').update(parts.body).digest('hex')
  return [parts.timestamp, parts.method.toUpperCase(), parts.path, parts.tenantSlug, bodyHash].join('\n')
}

export function signInternalRequest(secret: string, parts: Parameters<typeof signingString>[0]): string {
  return createHmac('sha256', secret).update(signingString(parts)).digest('hex')
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

type ParseDone = (error: Error | null, value?: unknown) => void

/**
 * An operations call signed with SVC_INTERNAL_HMAC_SECRET (docs/api.md#signed-internal-calls) instead of a user
 * token (`access: 'internal-signed'`). The tenant comes from the signed `X-Tenant-Slug`; a `tenantSlug` path
 * parameter must name the same one.
 */
const signed = (request: FastifyRequest) => policyOf(request.routeOptions.config).credential === 'internal-signature'

const invalid = (detail: string) => new AppError('INTERNAL_SIGNATURE_INVALID', detail)

/** Checks X-Signature against the request as received; returns the signed tenant slug. */
function verifySignature(request: FastifyRequest, secret: string): string {
  // A body the signed parser did not keep would go unsigned: a route served without it fails closed.
  const sentBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0
  if (sentBody && request.rawBody === null) throw new AppError('INTERNAL_ERROR', 'signed route without the signed JSON parser')
  const tenantSlug = header(request, 'x-tenant-slug')!
  const expected = signInternalRequest(secret, {
    timestamp: header(request, 'x-timestamp')!,
    method: request.method,
    // The request target as sent (path and query, not decoded): what the caller signed.
    path: request.raw.url ?? '',
    tenantSlug,
    body: request.rawBody ?? Buffer.alloc(0),
  })
  const presented = header(request, 'x-signature')!
  // Same-length buffers by construction (64 hex digits each), compared in constant time.
  const matches = SIGNATURE_PATTERN.test(presented) && timingSafeEqual(Buffer.from(presented, 'hex'), Buffer.from(expected, 'hex'))
  if (!matches) throw invalid('X-Signature does not match the request.')
  return tenantSlug
}

export default fp(
  async (app) => {
    const secret = app.env.SVC_INTERNAL_HMAC_SECRET
    if (!secret) app.log.warn('SVC_INTERNAL_HMAC_SECRET is not set: every /internal call answers 401')

    app.decorateRequest('rawBody', null)
    app.decorateRequest('bodyParseError', null)

    // Fastify's own parser (prototype-poisoning protection included), applied to the kept bytes.
    const parseJson = app.getDefaultJsonParser('error', 'error') as unknown as (request: FastifyRequest, body: Buffer, done: ParseDone) => void
    app.decorate('signedJsonParser', (request: FastifyRequest, body: Buffer, done: ParseDone) => {
      request.rawBody = body
      // Too deep is a parse error like any other: deferred, so it is answered only to a correctly signed caller.
      if (nestsDeeperThan(body)) {
        request.bodyParseError = tooDeep()
        done(null, undefined)
        return
      }
      parseJson(request, body, (error, value) => {
        request.bodyParseError = error
        done(null, error ? undefined : value)
      })
    })

    // The three hooks below run on every request, so each is a callback that answers at once for an unsigned route
    // and runs its async work only for a signed one (docs/architecture.md#what-every-request-pays).

    // onRequest: headers and clock are checked before the body is read, so an unsigned caller costs nothing.
    app.addHook('onRequest', (request, _reply, done) => {
      if (!signed(request)) return done()
      if (!secret) return done(invalid('Internal calls are disabled: no signing secret is configured.'))
      const missing = ['x-tenant-slug', 'x-timestamp', 'x-signature'].filter((name) => !header(request, name))
      if (missing.length > 0) return done(invalid(`Missing header(s): ${missing.join(', ')}.`))
      const timestamp = header(request, 'x-timestamp')!
      const skew = TIMESTAMP_PATTERN.test(timestamp) ? Math.abs(Math.floor(Date.now() / 1000) - Number(timestamp)) : Infinity
      if (skew > SIGNATURE_WINDOW_SECONDS) {
        return done(invalid(`X-Timestamp must be epoch seconds within ${SIGNATURE_WINDOW_SECONDS} s of the server clock.`))
      }
      done()
    })

    // preValidation: the raw body exists now, and neither body validation nor the tenant transaction
    // (tenant-tx's preHandler) has run, so every unsigned request stops here without touching tenant data.
    const checkSignedCall = async (request: FastifyRequest, secret: string) => {
      const tenantSlug = verifySignature(request, secret)
      const pathSlug = (request.params as Record<string, unknown> | undefined)?.tenantSlug
      if (pathSlug !== undefined && pathSlug !== tenantSlug) throw new AppError('TENANT_MISMATCH')
      const tenant = await findTenantBySlug(app.db, tenantSlug)
      if (!tenant) throw new AppError('TENANT_NOT_FOUND', `No tenant has the slug ${JSON.stringify(tenantSlug.slice(0, 63))}.`)
      // tenant-tx opens this tenant's transaction next, exactly as it does for a user token.
      request.tenantId = tenant.id
      // Fastify's own parser error (empty or malformed JSON), rendered as VALIDATION_FAILED by the problem plugin.
      if (request.bodyParseError) throw request.bodyParseError
    }
    app.addHook('preValidation', (request, _reply, done) => {
      if (!signed(request) || !secret) return done()
      continueAfter(checkSignedCall(request, secret), done)
    })

    // A signed call is accepted once: otherwise a captured call (a REJECTED) could be sent again
    // within the window, over a later decision. The signature is claimed in the request's own transaction
    // (tenant-tx's preHandler, registered before this one, has opened it): it is used up only if the call commits,
    // and of two concurrent replays the second waits on the row and then finds it taken.
    const claimOnce = async (request: FastifyRequest) => {
      // Kept until the timestamp leaves the window; after that the timestamp check refuses the call by itself.
      const expiresAt = new Date((Number(header(request, 'x-timestamp')) + SIGNATURE_WINDOW_SECONDS) * 1000)
      if (!(await claimSignature(request.db, header(request, 'x-signature')!, expiresAt))) {
        throw invalid('This signed call was already accepted; sign every call anew (a fresh X-Timestamp).')
      }
    }
    app.addHook('preHandler', (request, _reply, done) => {
      if (!signed(request) || !secret) return done()
      continueAfter(claimOnce(request), done)
    })
  },
  { name: 'internal-signature', dependencies: ['env', 'access', 'db', 'tenant-tx'] },
)
