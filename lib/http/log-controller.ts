import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `debug`: the route's "incoming request" / "request completed" lines are written at debug, so probes polled
     * every few seconds stay out of an info log. (Fastify's route `logLevel` is a threshold: it cannot lower a
     * line's own level, and `debug` there would let the route's debug lines through at LOG_LEVEL=info.)
     */
    requestLog?: 'debug'
  }
}

const quiet = (request: FastifyRequest) => request.routeOptions.config?.requestLog === 'debug'

/**
 * Whose request it was (ids only: never names, login ids or phone numbers), set by auth once the token is verified.
 * Added to the line itself: a child logger per request cost a few per cent of GET /v1/me's CPU even at
 * LOG_LEVEL=warn, where no request line is written at all.
 */
function caller(request: FastifyRequest): { tenantId?: number; userId?: number } {
  const identity = request.identity
  return identity ? { tenantId: identity.tenantId, userId: identity.userId } : {}
}

/**
 * Fastify's request lines, with routes marked `requestLog: 'debug'` logged at debug (errors stay at error), and the
 * caller's tenant and user on every "request completed" / "request errored" line.
 */
export class OperatorLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (!quiet(request)) return super.incomingRequest(request, reply)
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    const responseTime = reply.elapsedTime
    if (error) {
      reply.log.error({ res: reply, err: error, responseTime, ...caller(request) }, 'request errored')
      return
    }
    const level = quiet(request) ? 'debug' : 'info'
    reply.log[level]({ res: reply, responseTime, ...caller(request) }, 'request completed')
  }
}
