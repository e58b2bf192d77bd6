import fp from 'fastify-plugin'
import { REQUEST_ID_HEADER } from '../../lib/http/request-id.js'

/**
 * Every answer carries its request id (chosen by lib/http/request-id.ts, on every log line as `reqId`) in
 * X-Request-Id, problem answers included: onSend runs for every reply that is sent, whatever produced it. Problem
 * bodies carry it as `requestId` where they are rendered (lib/http/problem.ts `problemBody`).
 */
export default fp(
  async (app) => {
    // A callback, not an async function: it runs on every answer (docs/architecture.md#what-every-request-pays).
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.header(REQUEST_ID_HEADER, request.id)
      done(null, payload)
    })
  },
  { name: 'request-id' },
)
