import sensible from '@fastify/sensible'
import fp from 'fastify-plugin'

/**
 * @fastify/sensible's reply helpers. Every answer of this API is personal or carries credentials (Set-Cookie), so
 * none may be stored by a browser or a shared cache unless a route says otherwise.
 */
export default fp(
  async (app) => {
    await app.register(sensible)
    app.addHook('onSend', async (_request, reply, payload) => {
      if (!reply.hasHeader('cache-control')) reply.cacheControl('no-store')
      return payload
    })
  },
  { name: 'sensible' },
)
