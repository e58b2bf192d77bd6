import fp from 'fastify-plugin'

/** Every body this service accepts is JSON; anything else answers 415 instead of reaching a schema as text. */
export default fp(
  async (app) => {
    app.removeContentTypeParser(['text/plain'])
  },
  { name: 'json-only' },
)
