import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import webhooks from './webhooks.js'

/**
 * Outbound events: signed webhook deliveries of SMS delivery events to the academy's endpoint. Routes:
 * routes/v1/webhook-endpoint.ts. Logic: lib/events/. Repositories: db/repos/events/.
 */
export default fp<AppOptions>(
  async (app, options) => {
    await app.register(webhooks, options)
  },
  { name: 'events', dependencies: ['env', 'db', 'metrics', 'data-keys'] },
)
