import fp from 'fastify-plugin'
import { answerExpectation, refuseMissingHost } from '../../lib/http/node-refusals.js'

/**
 * Two requests Node's HTTP server would refuse itself with an empty body, answered as problem+json instead, still
 * outside any route: one without a Host header (Node's own check is off, lib/http/server-options.ts, so this hook
 * must stay), and an `Expect` Node cannot meet. The Host check is the first onRequest hook: `access` and `closing`,
 * on which every other refusing hook depends, depend on this plugin, so it is registered before them.
 */
export default fp(
  async (app) => {
    app.server.on('checkExpectation', answerExpectation)
    // A callback, not an async function: it runs on every request (docs/architecture.md#what-every-request-pays). Answered: the chain stops.
    app.addHook('onRequest', (request, reply, done) => {
      if (refuseMissingHost(request.raw, reply.raw)) return reply.hijack()
      done()
    })
  },
  { name: 'node-refusals' },
)
