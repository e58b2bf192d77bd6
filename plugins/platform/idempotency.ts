import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { KeyScope } from '../../db/repos/idempotency-keys.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { AppError } from '../../lib/errors.js'
import { appendRouteHook } from '../../lib/http/route-hooks.js'
import { claimKey, completeClaim, releaseClaim, type Claim } from '../../lib/idempotency/claims.js'
import { requestFingerprint } from '../../lib/idempotency/fingerprint.js'
import { IDEMPOTENCY_KEY_PATTERN } from '../../lib/idempotency/key-format.js'
import { createReleaseRetries } from '../../lib/idempotency/release-retries.js'

/** Route flag: the route takes an `Idempotency-Key` and can re-read what it created for a replay. */
export interface IdempotentRoute {
  /** The current representation of the resource a completed request created; throws when it is gone. */
  load(trx: TenantTx, resourceId: number, request: FastifyRequest): Promise<unknown>
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs an `Idempotency-Key` header and never runs twice for one key (docs/api.md#idempotency). */
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
const KEY_FORMAT = new RegExp(IDEMPOTENCY_KEY_PATTERN)

interface HeldKey extends Claim {
  completed: boolean
}

const kHeld = Symbol('idempotencyKeyHeld')
type WithHeldKey = FastifyRequest & { [kHeld]: HeldKey | null }

/**
 * Idempotency as an extension of the request transaction (plugins/platform/tenant-tx.ts): before the transaction opens, the
 * key is claimed (or the request answered as a replay); once it has ended, the key is kept only if the request
 * committed a success that reached the client, and given back otherwise so the client may correct and retry. A key
 * that cannot be given back (the database is out of reach) is given back in the background, and in any case frees
 * itself SVC_IDEMPOTENCY_CLAIM_SECONDS after it was claimed.
 */
export default fp(
  async (app) => {
    const claimSeconds = app.env.SVC_IDEMPOTENCY_CLAIM_SECONDS
    const releases = createReleaseRetries({
      release: (claim) => releaseClaim(app.db, claim),
      claimSeconds,
      log: app.log.child({ component: 'idempotency' }),
    })
    // Runs before the db plugin's close hook (it registered first): no retry outlives the pool.
    app.addHook('onClose', () => releases.stop())

    app.decorateRequest(kHeld, null)

    app.decorateRequest('completeIdempotency', async function (this: FastifyRequest, resourceId: number, statusCode: number) {
      const held = (this as WithHeldKey)[kHeld]
      if (!held) throw new AppError('INTERNAL_ERROR', 'no idempotency claim for this request')
      await completeClaim(this.db, held, resourceId, statusCode)
      held.completed = true
    })

    // The key is part of the route's header schema (so the OpenAPI document marks it required), but a request
    // without one answers IDEMPOTENCY_KEY_MISSING, not the schema's VALIDATION_FAILED: checked before validation,
    // after the role guards of onRequest.
    app.addHook('onRoute', (route) => {
      if (!route.config?.idempotency) return
      appendRouteHook(route, 'preValidation', async (request: FastifyRequest) => {
        const key = request.headers[KEY_HEADER]
        if (typeof key !== 'string' || !KEY_FORMAT.test(key)) throw new AppError('IDEMPOTENCY_KEY_MISSING')
      })
    })

    app.requestTransaction.extend({
      name: 'idempotency',
      appliesTo: (config) => config.idempotency !== undefined,

      // After validation (a request the schema refuses claims nothing) and after every onRequest hook (the role
      // guards answer before a key is even looked at).
      async beforeOpen(request, reply) {
        const route = request.routeOptions.config.idempotency!
        const key = request.headers[KEY_HEADER] as string // checked in preValidation
        const identity = request.identity
        if (!identity) throw new AppError('INTERNAL_ERROR', 'idempotent route without an authenticated caller')
        const pattern = request.routeOptions.url ?? request.url
        const scope: KeyScope = { tenantId: identity.tenantId, userId: identity.userId, route: `${request.method} ${pattern}`, key }
        const fingerprint = requestFingerprint(request.method, pattern, request.params, request.body)
        const caller = { tenantId: identity.tenantId, accessJti: request.accessJti, userId: identity.userId, apiKeyId: identity.apiKeyId }
        const outcome = await claimKey(app.db, caller, { scope, fingerprint, claimSeconds }, (trx, id) => route.load(trx, id, request))
        if (outcome.kind === 'claimed') {
          ;(request as WithHeldKey)[kHeld] = { ...outcome.claim, completed: false }
          return 'continue'
        }
        // The handler never runs for a replay: the client gets the current state of what its first call created.
        reply.code(outcome.statusCode).header(REPLAYED_HEADER, 'true').send(outcome.body)
        return 'answered'
      },

      async afterEnd(request, end, answer) {
        const holder = request as WithHeldKey
        const held = holder[kHeld]
        holder[kHeld] = null
        if (!held) return
        const kept = end.outcome === 'committed' && held.completed && answer.statusCode < 400 && answer.delivered
        // Never waits for more than one try: a database out of reach leaves the rest to the background.
        if (!kept) await releases.release(held)
      },
    })
  },
  { name: 'idempotency', dependencies: ['env', 'db', 'sign-in', 'tenant-tx'] },
)
