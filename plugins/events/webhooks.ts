import fp from 'fastify-plugin'
import { scheduleJob } from '../../lib/scheduled-job.js'
import type { AppOptions } from '../../app.js'
import { createWebhookDeliverer, type Deliverer } from '../../lib/events/deliverer.js'
import { systemResolve, type ResolveHost } from '../../lib/events/resolve-host.js'
import type { KeyRing } from '../../lib/crypto/key-ring.js'
import { secretSealingKeys } from '../../lib/events/signing-secret.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Delivery events to the tenants' endpoints (lib/events): what the endpoint routes and the loop share. */
    webhooks: {
      /** Seal and open signing secrets; derived from the data keys, as stable across instances as they are. */
      sealingKey: KeyRing
      /** SVC_WEBHOOK_ALLOW_PRIVATE. */
      allowPrivate: boolean
      /** Resolves an endpoint's host when it is set (and at each delivery). */
      resolve: ResolveHost
      /** The delivery loop; with SVC_SMS_DISPATCHER=off (an API-only instance) kick does nothing. */
      deliverer: Pick<Deliverer, 'kick' | 'runOnce'>
    }
  }
}

/**
 * Events are rows of the outbox (webhook_events), written by a trigger with the status change that causes them;
 * every instance with background work on (SVC_SMS_DISPATCHER=on) delivers them: on the dispatcher's tick, and as
 * soon as a worker frees up. Off, events wait for an instance that delivers.
 */
export default fp<AppOptions>(
  async (app, options) => {
    const { env } = app
    const sealingKey = secretSealingKeys(app.dataKeys)
    const resolve = options.resolveHost ?? systemResolve
    const deliverer = createWebhookDeliverer({
      db: app.db,
      log: app.log.child({ component: 'webhooks' }),
      sealingKey,
      timeoutMs: env.SVC_WEBHOOK_TIMEOUT_MS,
      allowPrivate: env.SVC_WEBHOOK_ALLOW_PRIVATE,
      concurrency: env.SVC_WEBHOOK_CONCURRENCY,
      tenantConcurrency: env.SVC_WEBHOOK_TENANT_CONCURRENCY,
      resolve,
      metrics: app.metrics,
      databaseOutage: app.databaseOutage,
    })
    const enabled = env.SVC_SMS_DISPATCHER === 'on'
    app.decorate('webhooks', {
      sealingKey,
      allowPrivate: env.SVC_WEBHOOK_ALLOW_PRIVATE,
      resolve,
      deliverer: { kick: () => (enabled ? deliverer.kick() : undefined), runOnce: deliverer.runOnce },
    })
    // Stopped either way: a runOnce (operations, tests) keeps connections open until then.
    if (!enabled) {
      app.addHook('onClose', () => deliverer.stop())
      return
    }
    scheduleJob(app, options.scheduledJobs, {
      name: 'webhook-delivery',
      expression: env.SVC_SMS_SCHEDULER_CRON,
      tick: () => deliverer.kick(),
      onReady: () => deliverer.kick(),
      stop: () => deliverer.stop(),
    })
  },
  { name: 'webhooks', dependencies: ['env', 'db', 'metrics', 'data-keys'] },
)
