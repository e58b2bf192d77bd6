import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import { systemClock, type Clock } from '../../lib/clock.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Now, for rules that depend on the time of day (lib/clock.ts); the system clock outside tests. */
    clock: Clock
  }
}

export default fp<AppOptions>(
  async (app, options) => {
    app.decorate('clock', options.clock ?? systemClock)
  },
  { name: 'clock' },
)
