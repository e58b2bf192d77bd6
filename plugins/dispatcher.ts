import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    dispatcher: {
      /** Asks the dispatcher to look for due messages now (called after a send commits). */
      kick(): void
    }
  }
}

// Interim entry point: the dispatch engine replaces this body; until then the message rows wait as PENDING.
export default fp(
  async (app) => {
    app.decorate('dispatcher', { kick: () => undefined })
  },
  { name: 'dispatcher', dependencies: ['db'] },
)
