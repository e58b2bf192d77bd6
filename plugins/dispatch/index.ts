import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import dispatcher from './dispatcher.js'
import providerCallback from './provider-callback.js'

/**
 * Dispatch and delivery: the loop that hands due messages to the provider exactly once, with leases and retries,
 * and the provider's delivery reports. Routes: routes/v1/sms/webhook.ts. Logic: lib/dispatch/ (providers/,
 * delivery/). Repositories: db/repos/dispatch/.
 */
export default fp<AppOptions>(
  async (app, options) => {
    await app.register(dispatcher, options)
    await app.register(providerCallback, options)
  },
  { name: 'dispatch', dependencies: ['env', 'db', 'metrics', 'clock', 'access', 'cors', 'closing'] },
)
