import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isDatabaseUnavailable } from '../../db/errors.js'
import { AppError } from '../../lib/errors.js'
import { sendProblem, toAppError } from '../../lib/http/problem.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * The methods a known path serves (RFC 9110 section 15.5.6: 405 names them in Allow). OPTIONS is never one of them:
 * the catch-all OPTIONS route of plugins/platform/cors.ts answers only preflights from listed origins (404 to anyone else).
 */
function allowedMethods(app: FastifyInstance, path: string): string[] {
  return METHODS.filter((method) => app.findRoute({ method, url: path }) !== null)
}

export default fp(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const problem = toAppError(error)
      if (request.raw.socket?.destroyed) {
        // The client hung up mid-request (its transaction was rolled back); nobody receives this answer.
        request.log.info({ code: problem.code, reason: error.message }, 'client went away before the answer')
      } else if (isDatabaseUnavailable(error)) {
        // 503 with Retry-After: the outage is logged once for the instance, not with a stack per refused request.
        app.databaseOutage.refusedRequest(error, reply.elapsedTime)
      } else if (problem.status >= 500) {
        // Details stay in the log (with the request id); the client only sees the catalog text.
        request.log.error({ err: error }, 'request failed')
      } else if (!(error instanceof AppError)) {
        request.log.info({ code: problem.code, reason: error.message }, 'client error')
      }
      return sendProblem(reply, problem)
    })

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? ''
      const allowed = request.method === 'OPTIONS' ? [] : allowedMethods(app, path)
      if (allowed.length > 0) {
        const problem = new AppError('METHOD_NOT_ALLOWED', `${path.slice(0, 200)} accepts ${allowed.join(', ')}`, {
          headers: { allow: allowed.join(', ') },
        })
        return sendProblem(reply, problem)
      }
      return sendProblem(reply, new AppError('NOT_FOUND', `No endpoint ${request.method} ${path.slice(0, 200)}`))
    })
  },
  { name: 'problem', dependencies: ['db'] },
)
