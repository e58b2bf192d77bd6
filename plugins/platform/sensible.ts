import sensible from '@fastify/sensible'
import fp from 'fastify-plugin'

/**
 * @fastify/sensible's reply helpers. Every answer of this API is personal or carries credentials (Set-Cookie), so
 * none may be stored by a browser or a shared cache unless a route says otherwise.
 */
export default fp(
  async (app) => {
    await app.register(sensible)
    // A callback, not an async function: it runs on every answer (docs/architecture.md#what-every-request-pays).
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (!reply.hasHeader('cache-control')) reply.cacheControl('no-store')
      done(null, payload)
    })
  },
  { name: 'sensible' },
)
