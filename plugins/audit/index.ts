import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import audit from './audit.js'

/**
 * Audit and usage: `request.audit` records an event in the request's transaction. Routes:
 * routes/v1/audit-events.ts, routes/v1/sms/usage.ts. Logic: lib/audit/. Repositories: db/repos/audit/.
 */
export default fp<AppOptions>(
  async (app, options) => {
    await app.register(audit, options)
  },
  { name: 'audit', dependencies: ['tenant-tx', 'sign-in'] },
)
