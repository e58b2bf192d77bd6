import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import type { Env } from '../../lib/env.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Validated settings (lib/env.ts); the only way code reads configuration. */
    env: Env
  }
}

export default fp<AppOptions>(
  async (app, options) => {
    app.decorate('env', options.env)
  },
  { name: 'env' },
)
