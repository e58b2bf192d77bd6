import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import domainEvents from './domain-events.js'

/**
 * Tenancy: academies and their people. Registration publishes OwnerRegisteredEvent on the in-process bus
 * (`app.events`) registered here. Routes: routes/v1/register.ts. Logic: lib/tenancy/. Repositories:
 * db/repos/tenancy/. Binding a request to its tenant is the platform's (plugins/platform/tenant-tx.ts).
 */
export default fp<AppOptions>(
  async (app, options) => {
    await app.register(domainEvents, options)
  },
  { name: 'tenancy' },
)
