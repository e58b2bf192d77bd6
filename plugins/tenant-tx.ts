import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { ControlledTransaction } from 'kysely'
import type { DB } from '../db/schema.js'
import { openRequestScope, type TenantTx } from '../db/tenant.js'
import { requestScopeRefusal } from '../lib/db-errors.js'
import { AppError } from '../lib/errors.js'
import { PROBLEM_CONTENT_TYPE, problemBody } from '../lib/http/problem.js'

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
        // A revoked token found only now (the handler sent nothing): the transaction is over all the same.
        if (!requestScopeRefusal(error)) request.log.error({ err: error }, 'rollback failed')
      })
    }

    // preHandler: after validation, so malformed requests never take a connection. On PostgreSQL the scope
    // statement (tenant GUC and revocation check) leaves in one write with the handler's first statement; a revoked
    // token aborts the transaction before that statement runs, and that statement, or the commit when the handler
    // sent none, fails with AUTH_004. So the database is the handler's only effect before that answer arrives:
    // work outside it (events, dispatch kicks) goes through afterCommit, which never runs for a revoked token.
    app.addHook('preHandler', async (request) => {
      if (request.routeOptions.config.tenant !== true) return
      const tenantId = request.tenantId
      if (tenantId === null) throw new AppError('INTERNAL_ERROR', 'route needs a tenant context but none was set')
      const trx = await app.db.startTransaction().execute()
      try {
        const tenantTrx = await openRequestScope(trx, tenantId, request.accessJti, request.identity?.userId ?? null)
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
        try {
          await open.trx.rollback().execute()
        } catch (error) {
          const refusal = requestScopeRefusal(error)
          if (!refusal) {
            // The connection broke (the error being answered is usually why): the server ends the transaction
            // with the session and Kysely has released the connection, so the answer stands.
            request.log.warn({ err: error }, 'rollback failed')
            return payload
          }
          // The handler failed before sending a statement, so the revocation check travelled with this rollback.
          // A revoked token learns nothing else; this is an error reply already, so it is rewritten here.
          const refused = new AppError(refusal)
          reply.code(refused.status).type(PROBLEM_CONTENT_TYPE)
          return JSON.stringify(problemBody(refused, request.id))
        }
        return payload
      }
      try {
        await open.trx.commit().execute()
      } catch (error) {
        // Kysely keeps the connection of a failed commit until a rollback releases it.
        await open.trx.rollback().execute().catch(() => undefined)
        throw error
      }
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
