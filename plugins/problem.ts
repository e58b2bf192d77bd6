import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../lib/errors.js'
import { sendProblem, toAppError } from '../lib/http/problem.js'

export default fp(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const problem = toAppError(error)
      if (request.raw.socket?.destroyed) {
        // The client hung up mid-request (its transaction was rolled back); nobody receives this answer.
        request.log.info({ code: problem.code, reason: error.message }, 'client went away before the answer')
      } else if (problem.status >= 500) {
        // Details stay in the log (with the request id); the client only sees the catalog text.
        request.log.error({ err: error }, 'request failed')
      } else if (!(error instanceof AppError)) {
        request.log.info({ code: problem.code, reason: error.message }, 'client error')
      }
      return sendProblem(reply, problem)
    })

    app.setNotFoundHandler((request, reply) => {
      return sendProblem(reply, new AppError('NOT_FOUND', `No endpoint ${request.method} ${request.url.split('?')[0]?.slice(0, 200)}`))
    })
  },
  { name: 'problem' },
)
