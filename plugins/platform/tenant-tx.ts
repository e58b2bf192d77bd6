import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isDatabaseUnavailable } from '../../db/errors.js'
import { openRequestTransaction, type RequestTransaction, type TenantTx, type TransactionEnd } from '../../db/tenant-transaction.js'
import { catalogErrorFor, refusalError } from '../../lib/catalog-errors.js'
import { AppError } from '../../lib/errors.js'
import { policyOf } from '../../lib/http/access.js'
import { PROBLEM_CONTENT_TYPE, problemBody } from '../../lib/http/problem.js'
import { continueAfter } from '../../lib/http/route-hooks.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Features that run around the request transaction of the routes they apply to. */
    requestTransaction: { extend(extension: TransactionExtension): void }
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

/** How a request's transaction ended, or that it never opened (an extension answered, or opening failed). */
export type RequestEnd = TransactionEnd | { outcome: 'not-opened' }

/** The answer as it stands when the transaction ends; `delivered` is false when the client has gone. */
export interface RequestAnswer {
  statusCode: number
  delivered: boolean
}

/**
 * A feature that runs around the request transaction, on the routes it applies to only (idempotency is one).
 * `beforeOpen` runs after validation, before the transaction opens; it may answer the request itself (it sends
 * the reply and says 'answered'), and then no transaction opens. `afterEnd` runs exactly once for every request
 * whose `beforeOpen` ran, after the transaction has ended, with how it ended, before the answer leaves.
 */
export interface TransactionExtension {
  name: string
  appliesTo(config: FastifyContextConfig): boolean
  beforeOpen?(request: FastifyRequest, reply: FastifyReply): Promise<'continue' | 'answered'>
  afterEnd?(request: FastifyRequest, end: RequestEnd, answer: RequestAnswer): Promise<void>
}

/** One request's passage through its transaction. */
interface Passage {
  transaction: RequestTransaction | null
  /** Extensions whose beforeOpen ran: each is owed one afterEnd. */
  entered: TransactionExtension[]
  afterCommit: Array<() => unknown>
  finished: boolean
  /** The preHandler is opening the transaction (extensions' beforeOpen, then waiting for a pooled connection). */
  opening: boolean
  /** The client hung up while it was opening: the preHandler ends the request once opening is over. */
  abortedWhileOpening: boolean
}

const kPassage = Symbol('requestTransactionPassage')
type WithPassage = FastifyRequest & { [kPassage]: Passage | null }

/**
 * The request transaction's lifecycle, in the order it runs:
 *   which routes  those whose access names a tenant (a user's access token, a signed internal call:
 *                 lib/http/access.ts); the plugin that verified the credential has set request.tenantId
 *   preHandler    the route's extensions' beforeOpen, then openRequestTransaction (db/tenant-transaction.ts)
 *   handler       request.db
 *   onSend        end: commit for a success, rollback otherwise; extensions' afterEnd; the outcome mapped to the
 *                 answer (a refused token or a failed commit replaces it); after-commit work scheduled
 *   safety nets   onRequestAbort and onResponse roll back a request that never reached onSend
 */
export default fp(
  async (app) => {
    const extensions: TransactionExtension[] = []
    app.decorate('requestTransaction', {
      extend(extension: TransactionExtension) {
        extensions.push(extension)
      },
    })
    // Chosen on a route's first request (extensions register while plugins load, some after the first routes).
    const chosen = new WeakMap<FastifyContextConfig, readonly TransactionExtension[]>()
    const extensionsOf = (config: FastifyContextConfig) => {
      let applying = chosen.get(config)
      if (!applying) chosen.set(config, (applying = extensions.filter((extension) => extension.appliesTo(config))))
      return applying
    }

    app.decorateRequest('tenantId', null)
    app.decorateRequest('accessJti', null)
    app.decorateRequest(kPassage, null)
    app.decorateRequest('db', {
      getter(this: FastifyRequest) {
        const transaction = (this as WithPassage)[kPassage]?.transaction
        if (!transaction) throw new AppError('INTERNAL_ERROR', 'no tenant transaction for this request')
        return transaction.db
      },
    })
    app.decorateRequest('afterCommit', function (this: FastifyRequest, fn: () => unknown) {
      const passage = (this as WithPassage)[kPassage]
      if (!passage?.transaction) throw new AppError('INTERNAL_ERROR', 'afterCommit outside a tenant transaction')
      passage.afterCommit.push(fn)
    })

    /** Ends the request's transaction once and runs the extensions owed an afterEnd; null when there is nothing. */
    const finish = async (request: FastifyRequest, wanted: 'commit' | 'rollback', answer: RequestAnswer) => {
      const passage = (request as WithPassage)[kPassage]
      if (!passage || passage.finished) return null
      passage.finished = true
      const end: RequestEnd = passage.transaction ? await passage.transaction.end(wanted) : { outcome: 'not-opened' }
      for (const extension of passage.entered) {
        await extension.afterEnd?.(request, end, answer).catch((error: unknown) => {
          request.log.error({ err: error, extension: extension.name }, 'transaction extension failed after the end')
        })
      }
      return { end, passage }
    }

    // preHandler: after validation, so malformed requests never take a connection. On PostgreSQL the scope
    // statement (tenant GUC, revocation and status checks) leaves in one write with the handler's first statement;
    // a refused token aborts the transaction before that statement runs, so the database is the handler's only
    // effect before the refusal arrives: work outside it (events, dispatch kicks) goes through afterCommit.
    //
    // The hooks here run on every request: callbacks that answer at once where there is no transaction, with their
    // async work handed to continueAfter where there is (docs/architecture.md#what-every-request-pays).
    /** Opens the request's transaction; true when the request was answered meanwhile (an extension, a hang-up). */
    const open = async (request: FastifyRequest, reply: FastifyReply, config: FastifyContextConfig): Promise<boolean> => {
      const tenantId = request.tenantId
      if (tenantId === null) throw new AppError('INTERNAL_ERROR', 'route needs a tenant context but none was set')
      const passage: Passage = { transaction: null, entered: [], afterCommit: [], finished: false, opening: true, abortedWhileOpening: false }
      ;(request as WithPassage)[kPassage] = passage
      try {
        for (const extension of extensionsOf(config)) {
          passage.entered.push(extension)
          if ((await extension.beforeOpen?.(request, reply)) === 'answered') return true
        }
        passage.transaction = await openRequestTransaction(app.db, {
          tenantId,
          accessJti: request.accessJti,
          userId: request.identity?.userId ?? null,
          apiKeyId: request.identity?.apiKeyId ?? null,
          readOnly: request.method === 'GET' || request.method === 'HEAD',
        })
      } finally {
        passage.opening = false
        // The client hung up meanwhile and the safety net left the end to this hook: end here what has just opened
        // (or failed to), or its pooled connection would never go back (one such request per busy moment empties
        // the pool) and the extensions would never hear of the end.
        if (passage.abortedWhileOpening) await finish(request, 'rollback', { statusCode: 0, delivered: false })
      }
      // Nobody is left to answer.
      if (passage.abortedWhileOpening) reply.hijack()
      return passage.abortedWhileOpening
    }
    app.addHook('preHandler', (request, reply, done) => {
      const config = request.routeOptions.config
      if (!policyOf(config).tenantTransaction) return done()
      // Answered: the chain stops without `done`.
      open(request, reply, config).then((answered) => answered || done(), done)
    })

    // onSend runs before the answer leaves, so how the transaction ended can still change it. Fastify runs onSend
    // again for an answer replaced here; `finish` has run by then and lets it through.
    const endAndAnswer = async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
      // A client that hung up never learns the outcome; rolling back lets it retry (idempotently) as if nothing ran.
      const clientGone = reply.raw.destroyed || request.raw.socket?.destroyed === true
      const failed = reply.statusCode >= 400 || clientGone
      const finished = await finish(request, failed ? 'rollback' : 'commit', { statusCode: reply.statusCode, delivered: !clientGone })
      if (!finished) return payload
      const { end, passage } = finished
      switch (end.outcome) {
        case 'committed':
          // The cheapest proof that the database serves again: no query of its own, a comparison when all is well.
          app.databaseOutage.reachable()
          for (const fn of passage.afterCommit) {
            // After-commit work (events, dispatch kicks) never delays or fails the answer.
            void Promise.resolve()
              .then(fn)
              .catch((error: unknown) => request.log.error({ err: error }, 'after-commit task failed'))
          }
          return payload
        case 'refused':
          // The handler sent no statement, so the token check travelled with the commit or rollback: whatever the
          // handler answered, a refused token learns nothing else.
          return replaceAnswer(reply, refusalError(end.refusal))
        case 'failed': {
          const error = catalogErrorFor(end.error) ?? new AppError('INTERNAL_ERROR')
          // A refusal the transaction's last statement carried with the commit (the daily quota) is an answer.
          if (isDatabaseUnavailable(end.error)) app.databaseOutage.refusedRequest(end.error, reply.elapsedTime)
          else if (error.status >= 500) request.log.error({ err: end.error }, 'commit failed')
          return replaceAnswer(reply, error)
        }
        case 'rolled-back':
          if (!end.brokenConnection) return payload
          if (!isDatabaseUnavailable(end.brokenConnection)) request.log.warn({ err: end.brokenConnection }, 'rollback failed')
          // A 5xx was counted as a refused request when it was answered; a success or a 4xx still reached the client.
          else if (reply.statusCode < 500) app.databaseOutage.failedWork('rollback', end.brokenConnection)
          return payload
        case 'not-opened':
          return payload
      }
    }
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!(request as WithPassage)[kPassage]) return done(null, payload)
      endAndAnswer(request, reply, payload).then((answer) => done(null, answer), done)
    })

    // Safety nets for requests that never reached onSend (aborted, hijacked, or failed while sending).
    app.addHook('onRequestAbort', async (request) => {
      const passage = (request as WithPassage)[kPassage]
      // Still opening (an extension at work, or waiting for a pooled connection): what it opens does not exist yet,
      // and an extension's afterEnd must not run beside its own beforeOpen. The preHandler ends it when opening is over.
      if (passage?.opening) {
        passage.abortedWhileOpening = true
        return
      }
      await finish(request, 'rollback', { statusCode: 0, delivered: false })
    })
    app.addHook('onResponse', (request, reply, done) => {
      if (!(request as WithPassage)[kPassage]) return done()
      continueAfter(finish(request, 'rollback', { statusCode: reply.statusCode, delivered: true }), done)
    })
  },
  { name: 'tenant-tx', dependencies: ['db'] },
)

/** The answer a request gets instead of what its handler produced, as a problem from the catalog. */
function replaceAnswer(reply: FastifyReply, error: AppError): string {
  if (error.extra.headers) reply.headers(error.extra.headers)
  reply.code(error.status).type(PROBLEM_CONTENT_TYPE)
  return JSON.stringify(problemBody(error, reply.request.id))
}
