import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import {
  completeKey,
  findKey,
  insertKey,
  releaseKey,
  takeOverKey,
  type KeyScope,
} from '../db/repos/idempotency-keys.js'
import { openRequestScope, withTenant, type TenantTx } from '../db/tenant.js'
import { AppError } from '../lib/errors.js'
import { appendRouteHook } from '../lib/http/route-hooks.js'

/** Route flag: the route takes an `Idempotency-Key` and can re-read what it created for a replay. */
export interface IdempotentRoute {
  /** The current representation of the resource a completed request created; throws when it is gone. */
  load(trx: TenantTx, resourceId: number, request: FastifyRequest): Promise<unknown>
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** DECISIONS section 4: the route needs an `Idempotency-Key` header and never runs twice for one key. */
    idempotency?: IdempotentRoute
  }
  interface FastifyRequest {
    /**
     * Records, inside the request transaction, that this request created `resourceId` and answered
     * `statusCode`; the key then commits together with the resource.
     */
    completeIdempotency(resourceId: number, statusCode: number): Promise<void>
  }
}

export const REPLAYED_HEADER = 'Idempotent-Replayed'
const KEY_HEADER = 'idempotency-key'
/** 1-255 visible ASCII characters; routes declare the same pattern in their header schema for the document. */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7E]{1,255}$'
const KEY_FORMAT = new RegExp(IDEMPOTENCY_KEY_PATTERN)
const VALIDATED_PARTS = ['params', 'querystring', 'headers', 'body'] as const

interface Claim {
  scope: KeyScope
  stamp: Date
  completed: boolean
}

type ClaimOutcome = { kind: 'claimed'; stamp: Date } | { kind: 'replay'; statusCode: number; body: unknown }

const kClaim = Symbol('idempotencyClaim')
type WithClaim = FastifyRequest & { [kClaim]: Claim | null }

/** JSON with object keys sorted at every depth, so key order never changes a fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    const fields = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
    return `{${fields.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * SHA-256 of method, route and canonical body. The route is its pattern plus the path parameters, so one key
 * sent to class 1 and then to class 2 is a different request, not a replay of the first.
 */
export function requestFingerprint(method: string, route: string, params: unknown, body: unknown): string {
  return createHash('sha256')
    .update(`${method}\n${route}\n${canonicalJson(params ?? {})}\n${canonicalJson(body ?? null)}`)
    .digest('hex')
}

/** Runs the route's own validators early; the schema answers a request it refuses, which then claims nothing. */
function passesSchema(request: FastifyRequest): boolean {
  const inputs = { params: request.params, querystring: request.query, headers: request.headers, body: request.body }
  return VALIDATED_PARTS.every((part) => {
    const validate = request.getValidationFunction(part)
    return typeof validate !== 'function' || validate(inputs[part] ?? null) === true
  })
}

/** Decides what a key means for this request, in one short transaction of its own. */
async function claimOrReplay(
  trx: TenantTx,
  scope: KeyScope,
  fingerprint: string,
  load: (trx: TenantTx, resourceId: number) => Promise<unknown>,
): Promise<ClaimOutcome> {
  let existing = await findKey(trx, scope)
  if (!existing) {
    const stamp = await insertKey(trx, scope, fingerprint)
    if (stamp) return { kind: 'claimed', stamp }
    existing = await findKey(trx, scope)
    if (!existing) throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS')
  }
  // An expired key is as good as absent (the purge may simply not have run yet); a stale IN_PROGRESS one
  // belonged to a request that died without answering and holds no result, so any retry may take it over.
  if (existing.expired || existing.stale) {
    const stamp = await takeOverKey(trx, scope, fingerprint)
    if (stamp) return { kind: 'claimed', stamp }
    throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS')
  }
  if (existing.fingerprint !== fingerprint) throw new AppError('IDEMPOTENCY_KEY_REUSED')
  if (existing.state === 'IN_PROGRESS' || existing.resourceId === null) {
    throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS')
  }
  const body = await load(trx, existing.resourceId)
  return { kind: 'replay', statusCode: existing.statusCode ?? 200, body }
}

export default fp(
  async (app) => {
    app.decorateRequest(kClaim, null)

    const take = (request: FastifyRequest): Claim | null => {
      const holder = request as WithClaim
      const claim = holder[kClaim]
      holder[kClaim] = null
      return claim
    }

    const release = async (request: FastifyRequest, claim: Claim) => {
      await withTenant(app.db, claim.scope.tenantId, (trx) => releaseKey(trx, claim.scope, claim.stamp)).catch(
        (error: unknown) => request.log.error({ err: error }, 'releasing an idempotency key failed'),
      )
    }

    app.decorateRequest('completeIdempotency', async function (this: FastifyRequest, resourceId: number, statusCode: number) {
      const claim = (this as WithClaim)[kClaim]
      if (!claim) throw new AppError('INTERNAL_ERROR', 'no idempotency claim for this request')
      if (!(await completeKey(this.db, claim.scope, claim.stamp, resourceId, statusCode))) {
        // The lease ran out and a retry took the key over: this request must not create a second resource.
        throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS')
      }
      claim.completed = true
    })

    // preValidation is the last stage before tenant-tx opens the request transaction (in preHandler). The claim
    // therefore commits on its own and is visible to duplicates at once, and no request ever holds two
    // connections. It runs after every onRequest hook, so the role guards answer before a key is even looked at.
    const claimHook = async (request: FastifyRequest, reply: FastifyReply) => {
      const route = request.routeOptions.config.idempotency
      if (!route) return
      const key = request.headers[KEY_HEADER]
      if (typeof key !== 'string' || !KEY_FORMAT.test(key)) throw new AppError('IDEMPOTENCY_KEY_MISSING')
      if (!passesSchema(request)) return
      const identity = request.identity
      if (!identity) throw new AppError('INTERNAL_ERROR', 'idempotent route without an authenticated caller')

      const pattern = request.routeOptions.url ?? request.url
      const scope: KeyScope = { tenantId: identity.tenantId, userId: identity.userId, route: `${request.method} ${pattern}`, key }
      const fingerprint = requestFingerprint(request.method, pattern, request.params, request.body)
      // Opened like the request transaction, revocation check included: a replay answers before tenant-tx runs,
      // and a logged-out token must not read what it once created (AUTH_004).
      const outcome = await app.db.transaction().execute(async (trx) => {
        const tenantTrx = await openRequestScope(trx, scope.tenantId, request.accessJti, identity.userId)
        return claimOrReplay(tenantTrx, scope, fingerprint, (loadTrx, id) => route.load(loadTrx, id, request))
      })
      if (outcome.kind === 'claimed') {
        ;(request as WithClaim)[kClaim] = { scope, stamp: outcome.stamp, completed: false }
        return
      }
      // The handler never runs for a replay: the client gets the current state of what its first call created.
      return reply.code(outcome.statusCode).header(REPLAYED_HEADER, 'true').send(outcome.body)
    }

    // A route-level onSend runs after tenant-tx's instance-level one, so the request transaction has committed
    // or rolled back by then. Anything but a committed success gives the key back, so the client may correct the
    // request and retry.
    const releaseHook = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const claim = take(request)
      if (!claim) return payload
      const clientGone = reply.raw.destroyed || request.raw.socket?.destroyed === true
      if (!claim.completed || reply.statusCode >= 400 || clientGone) await release(request, claim)
      return payload
    }

    // Safety nets for requests that never reached onSend (aborted, hijacked). Releasing is conditional on the
    // key still being IN_PROGRESS with this claim's stamp, so it can never undo a committed request.
    const releaseIfHeld = async (request: FastifyRequest) => {
      const claim = take(request)
      if (claim) await release(request, claim)
    }

    // Only idempotent routes pay for these hooks.
    app.addHook('onRoute', (route) => {
      if (!route.config?.idempotency) return
      appendRouteHook(route, 'preValidation', claimHook)
      appendRouteHook(route, 'onSend', releaseHook)
      appendRouteHook(route, 'onRequestAbort', releaseIfHeld)
      appendRouteHook(route, 'onResponse', releaseIfHeld)
    })
  },
  { name: 'idempotency', dependencies: ['db', 'auth', 'tenant-tx'] },
)
