import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { StringEnum } from '../../lib/http/response-types.js'

const HealthSchema = Type.Object({ status: StringEnum(['UP', 'DOWN']) }, { $id: 'Health', examples: [{ status: 'UP' }] })
const PROBE_TIMEOUT_MS = 2000

/** The database did not answer a probe in time: as much an outage as a refused connection. */
class ProbeTimedOut extends Error {
  constructor() {
    super('probe timed out')
  }
}

function withinProbeTimeout(work: Promise<unknown>): Promise<unknown> {
  return Promise.race([work, new Promise((_, reject) => setTimeout(() => reject(new ProbeTimedOut()), PROBE_TIMEOUT_MS).unref())])
}

const probeSchema = { tags: ['operations'], response: { 200: HealthSchema, 503: HealthSchema } }
// Probes arrive every few seconds from every orchestrator and balancer: their request lines are debug, not info.
const probeLog = { requestLog: 'debug' } as const

const routes: FastifyPluginAsyncTypebox = async (app) => {
  /**
   * A probe that finds the database out of reach is part of the outage (one warning for the instance, not one with a
   * stack per probe every few seconds); any other failure is logged as before. A probe that answers ends the outage.
   */
  const probeFailed = (request: FastifyRequest, probe: string, error: unknown) => {
    if (error instanceof ProbeTimedOut) app.databaseOutage.failedWork(probe, error)
    else if (!app.databaseOutage.absorbs(probe, error)) request.log.warn({ err: error }, `${probe} check failed`)
  }

  const health = { ...probeSchema, operationId: 'getHealth', summary: 'UP when the database answers' }
  app.get('/health', { config: { access: 'public', ...probeLog }, schema: health }, async (request, reply) => {
    try {
      await withinProbeTimeout(sql`select 1`.execute(app.db))
      app.databaseOutage.reachable()
      return { status: 'UP' as const }
    } catch (error) {
      probeFailed(request, 'health', error)
      return reply.code(503).send({ status: 'DOWN' as const })
    }
  })

  // Liveness restarts the process when it fails, so it asks nothing of the database: a database outage must not
  // turn into every instance restarting at once.
  const liveness = { ...probeSchema, operationId: 'getLiveness', summary: 'UP while the process serves HTTP' }
  app.get('/health/liveness', { config: { access: 'public', answersWhileClosing: true, ...probeLog }, schema: liveness }, async () => ({
    status: 'UP' as const,
  }))

  // Readiness takes the instance out of the load balancer: DOWN while closing, and whenever a parameterised query
  // cannot pass through the same pool, client and transaction path requests use (db/database.ts `probe`).
  app.get(
    '/health/readiness',
    {
      config: { access: 'public', answersWhileClosing: true, ...probeLog },
      schema: { ...probeSchema, operationId: 'getReadiness', summary: 'UP when a query passes through the request path' },
    },
    async (request, reply) => {
      if (app.closing) return reply.code(503).send({ status: 'DOWN' as const })
      try {
        await withinProbeTimeout(app.database.probe())
        app.databaseOutage.reachable()
        return { status: 'UP' as const }
      } catch (error) {
        probeFailed(request, 'readiness', error)
        return reply.code(503).send({ status: 'DOWN' as const })
      }
    },
  )
}

export default routes
