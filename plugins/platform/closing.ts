import fp from 'fastify-plugin'
import { serviceUnavailable } from '../../lib/catalog-errors.js'
import { sendProblem } from '../../lib/http/problem.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** True once the service has begun to close: readiness answers DOWN and new requests 503. */
    readonly closing: boolean
  }
  interface FastifyContextConfig {
    /** Still answered while closing (the probes, which report the shutdown themselves). */
    answersWhileClosing?: boolean
  }
}

/**
 * Shutdown as a load balancer sees it (the probes it reads are routes/actuator/index.ts). Fastify's own answer while closing (return503OnClosing, turned off in
 * lib/http/server-options.ts) is plain JSON outside the catalog; here a request that arrives after close began gets
 * 503 SERVICE_UNAVAILABLE as problem+json with Retry-After, and its connection is closed so the client retries
 * elsewhere. In-flight requests finish normally.
 */
export default fp(
  async (app) => {
    let closing = false
    app.decorate('closing', {
      getter: () => closing,
    })
    app.addHook('preClose', async () => {
      closing = true
    })
    // A callback, not an async function: it runs on every request (docs/architecture.md#what-every-request-pays). Answered: no `done`.
    app.addHook('onRequest', (request, reply, done) => {
      if (!closing || request.routeOptions.config.answersWhileClosing) return done()
      reply.header('connection', 'close')
      sendProblem(reply, serviceUnavailable('The service is shutting down; retry on another instance.'))
    })
  },
  // After node-refusals: a request without Host is refused as such, closing or not.
  { name: 'closing', dependencies: ['node-refusals'] },
)
