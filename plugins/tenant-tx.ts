import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { ControlledTransaction } from 'kysely'
import type { DB } from '../db/schema.js'
import { openRequestScope, type TenantTx } from '../db/tenant.js'
import { AppError } from '../lib/errors.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Open a tenant transaction for this route (needs a tenant set by auth or the internal signature). */
    tenant?: boolean
  }
  interface FastifyRequest {
    /** The tenant this request acts for; set by the auth or internal-signature plugin, else null. */
    tenantId: number | null
    /** The access token id to check against the revocation list when the transaction opens (AUTH_004). */
    accessJti: string | null
    /** The request's tenant transaction. Throws when the route has none, so a missing context fails closed. */
    readonly db: TenantTx
    /** Runs `fn` once the request transaction has committed (never after a rollback). */
    afterCommit(fn: () => unknown): void
  }
}

interface RequestTransaction {
  trx: ControlledTransaction<DB>
  tenantTrx: TenantTx
  afterCommit: Array<() => unknown>
}

const kTransaction = Symbol('tenantTransaction')
type WithTransaction = FastifyRequest & { [kTransaction]: RequestTransaction | null }

/** Detaches the open transaction from the request, so no later hook can end it twice. */
function take(request: FastifyRequest): RequestTransaction | null {
  const holder = request as WithTransaction
  const open = holder[kTransaction]
  holder[kTransaction] = null
  return open
}

export default fp(
  async (app) => {
    app.decorateRequest('tenantId', null)
    app.decorateRequest('accessJti', null)
    app.decorateRequest(kTransaction, null)
    app.decorateRequest('db', {
      getter(this: FastifyRequest) {
        const open = (this as WithTransaction)[kTransaction]
        if (!open) throw new AppError('INTERNAL_ERROR', 'no tenant transaction for this request')
        return open.tenantTrx
      },
    })
    app.decorateRequest('afterCommit', function (this: FastifyRequest, fn: () => unknown) {
      const open = (this as WithTransaction)[kTransaction]
      if (!open) throw new AppError('INTERNAL_ERROR', 'afterCommit outside a tenant transaction')
      open.afterCommit.push(fn)
    })

    const rollback = async (request: FastifyRequest) => {
      const open = take(request)
      if (!open) return
      await open.trx.rollback().execute().catch((error: unknown) => {
        request.log.error({ err: error }, 'rollback failed')
      })
    }

    // preHandler: after validation, so malformed requests never take a connection.
    app.addHook('preHandler', async (request) => {
      if (request.routeOptions.config.tenant !== true) return
      const tenantId = request.tenantId
      if (tenantId === null) throw new AppError('INTERNAL_ERROR', 'route needs a tenant context but none was set')
      const trx = await app.db.startTransaction().execute()
      try {
        const { tenantTrx, revoked } = await openRequestScope(trx, tenantId, request.accessJti)
        if (revoked) throw new AppError('AUTH_004')
        ;(request as WithTransaction)[kTransaction] = { trx, tenantTrx, afterCommit: [] }
      } catch (error) {
        await trx.rollback().execute().catch(() => undefined)
        throw error
      }
    })

    // onSend runs before the response leaves, so a failed commit still becomes an error response. The handle is
    // cleared first: Fastify runs onSend again for that error reply, and it must not commit twice.
    app.addHook('onSend', async (request, reply: FastifyReply, payload) => {
      const open = take(request)
      if (!open) return payload
      // A client that hung up never learns the outcome; rolling back lets it retry (idempotently) as if nothing ran.
      const clientGone = reply.raw.destroyed || request.raw.socket?.destroyed === true
      if (reply.statusCode >= 400 || clientGone) {
        await open.trx.rollback().execute()
        return payload
      }
      await open.trx.commit().execute()
      for (const fn of open.afterCommit) {
        // After-commit work (events, dispatch kicks) never delays or fails the response.
        void Promise.resolve()
          .then(fn)
          .catch((error: unknown) => request.log.error({ err: error }, 'after-commit task failed'))
      }
      return payload
    })

    app.addHook('onRequestAbort', rollback)
    // Safety net for replies that skipped onSend (hijacked or errored while sending).
    app.addHook('onResponse', rollback)
  },
  { name: 'tenant-tx', dependencies: ['db'] },
)
